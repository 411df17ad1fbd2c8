//! File stamps: a hash of what an agent read of a file, so the host can tell later — at the end of
//! the run, or when a person reopens a citation from last week's run — whether that part changed.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use canopy_protocol::FileStamp;
use xxhash_rust::xxh3::Xxh3;

/// Bytes hashed per read.
const CHUNK: usize = 64 * 1024;

/// Stamps the whole of `bytes` (content already in memory).
pub fn stamp_bytes(bytes: &[u8]) -> FileStamp {
    FileStamp {
        bytes: bytes.len() as u64,
        whole: true,
        hash: hex(xxhash_rust::xxh3::xxh3_64(bytes)),
    }
}

/// Stamps the first `prefix` bytes of content already in memory, of a file of `file_len` bytes (a
/// Read of a huge file that stopped early).
pub fn stamp_prefix(prefix: &[u8], file_len: u64) -> FileStamp {
    FileStamp {
        bytes: prefix.len() as u64,
        whole: prefix.len() as u64 >= file_len,
        hash: hex(xxhash_rust::xxh3::xxh3_64(prefix)),
    }
}

/// A stamp built while streaming a file's leading bytes (a Read of a file too big to hold whole).
#[derive(Default)]
pub struct Stamper {
    hasher: Xxh3,
    bytes: u64,
}

impl Stamper {
    /// A stamper over nothing yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds the next bytes of the file.
    pub fn update(&mut self, bytes: &[u8]) {
        self.hasher.update(bytes);
        self.bytes += bytes.len() as u64;
    }

    /// The stamp of the bytes seen so far, of a file of `file_len` bytes.
    pub fn finish(&self, file_len: u64) -> FileStamp {
        FileStamp {
            bytes: self.bytes,
            whole: self.bytes >= file_len,
            hash: hex(self.hasher.digest()),
        }
    }
}

/// Stamps the whole file at `path`, reading it.
pub fn stamp_file(path: &Path) -> io::Result<FileStamp> {
    let (bytes, hash, _) = hash_prefix(path, u64::MAX)?;
    Ok(FileStamp {
        bytes,
        whole: true,
        hash: hex(hash),
    })
}

/// Whether the file at `path` still holds what `stamp` recorded: the same leading bytes and, for a
/// whole-file stamp, nothing more. A missing or unreadable file has changed.
pub fn unchanged(path: &Path, stamp: &FileStamp) -> bool {
    match hash_prefix(path, stamp.bytes) {
        Ok((read, hash, more)) => {
            read == stamp.bytes && hex(hash) == stamp.hash && !(stamp.whole && more)
        }
        Err(_) => false,
    }
}

/// Hashes up to `limit` leading bytes: (bytes hashed, hash, whether the file has more).
fn hash_prefix(path: &Path, limit: u64) -> io::Result<(u64, u64, bool)> {
    let mut file = File::open(path)?;
    let mut hasher = Xxh3::new();
    let mut buf = vec![0u8; CHUNK];
    let mut read = 0u64;
    while read < limit {
        let want = usize::try_from((limit - read).min(CHUNK as u64)).unwrap_or(CHUNK);
        let n = match file.read(&mut buf[..want]) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        hasher.update(&buf[..n]);
        read += n as u64;
    }
    let more = read == limit && {
        let mut one = [0u8; 1];
        loop {
            match file.read(&mut one) {
                Ok(n) => break n > 0,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
    };
    Ok((read, hasher.digest(), more))
}

fn hex(hash: u64) -> String {
    format!("{hash:016x}")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_whole_file_stamp_notices_any_change_and_growth() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.rs");
        std::fs::write(&p, "one\ntwo\n").unwrap();
        let s = stamp_file(&p).unwrap();
        assert_eq!(s, stamp_bytes(b"one\ntwo\n"));
        assert!(unchanged(&p, &s));
        std::fs::write(&p, "one\ntwo\nthree\n").unwrap();
        assert!(!unchanged(&p, &s), "a file that grew has changed");
        std::fs::write(&p, "one\ntwO\n").unwrap();
        assert!(!unchanged(&p, &s), "same size, other bytes");
        std::fs::remove_file(&p).unwrap();
        assert!(!unchanged(&p, &s), "a deleted file has changed");
    }

    #[test]
    fn a_streamed_stamp_equals_the_stamp_of_the_same_bytes() {
        let mut s = Stamper::new();
        s.update(b"one\n");
        s.update(b"two\n");
        assert_eq!(s.finish(8), stamp_bytes(b"one\ntwo\n"));
        assert_eq!(s.finish(20), stamp_prefix(b"one\ntwo\n", 20));
        assert!(!s.finish(20).whole);
    }

    #[test]
    fn a_prefix_stamp_ignores_what_lies_past_the_part_read() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("big.log");
        std::fs::write(&p, "head\nmore\n").unwrap();
        let s = stamp_prefix(b"head\n", 10);
        assert!(!s.whole);
        assert!(unchanged(&p, &s));
        std::fs::write(&p, "head\nmore and more\n").unwrap();
        assert!(unchanged(&p, &s), "only the tail changed");
        std::fs::write(&p, "HEAD\nmore\n").unwrap();
        assert!(!unchanged(&p, &s));
    }
}
