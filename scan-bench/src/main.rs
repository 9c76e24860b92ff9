fn main() {
    let a = faer::Mat::<f64>::zeros(4, 4);
    println!("{:?}", a.nrows());
}
