//! Prints the query a fuzz input stands for: `cargo run --example show_query FILE`.
fn main() {
    let path = std::env::args().nth(1).expect("a fuzz input file");
    let data = std::fs::read(path).expect("readable");
    println!("{}", tern_fuzz::generate(&data));
}
