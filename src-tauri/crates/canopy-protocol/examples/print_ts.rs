//! Prints the protocol's TypeScript declarations (the app's generator adds its own types).
fn main() {
    print!("{}", canopy_protocol::typescript::protocol_declarations());
}
