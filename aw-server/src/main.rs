fn main() {
    println!("aw-server");
}
