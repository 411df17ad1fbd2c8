//! Benchmark driver for `scripts/bench-search.sh`: runs the real Grep or Glob tool code once on a
//! tree and prints its output, so hyperfine can time it against `rg` and `fdfind`.
//!
//! Usage: `search_bench <root> grep-files <pattern>` | `grep-content <pattern>` | `glob <pattern>`

use canopy_tools::{GlobTool, GrepTool, Tool, ToolContext};
use serde_json::json;

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let [_, root, mode, pattern] = args.as_slice() else {
        eprintln!("usage: search_bench <root> grep-files|grep-content|glob <pattern>");
        return std::process::ExitCode::from(2);
    };
    // Large enough that nothing is cut by the count cap: the tool does the same work as rg/fd.
    let all = u64::MAX / 2;
    let (tool, call): (&dyn Tool, serde_json::Value) = match mode.as_str() {
        "grep-files" => (&GrepTool, json!({"pattern": pattern, "max_results": all})),
        "grep-content" => (
            &GrepTool,
            json!({"pattern": pattern, "output_mode": "content", "max_results": all}),
        ),
        "glob" => (&GlobTool, json!({"pattern": pattern, "max_results": all})),
        other => {
            eprintln!("unknown mode {other}");
            return std::process::ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("runtime: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let ctx = ToolContext::new(root);
    match runtime.block_on(tool.run(call, &ctx)) {
        Ok(out) => {
            print!("{}", out.content);
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            std::process::ExitCode::FAILURE
        }
    }
}
