fn main() {
    eprintln!("bpc: under construction");
    std::process::exit(2);
}
