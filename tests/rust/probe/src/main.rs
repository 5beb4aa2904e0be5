//! A program and its tests, traced by cargo hookcc (tests/tests/rust.rs).

fn double(x: u32) -> u32 {
    x * 2
}

fn main() {
    println!("double(21) = {}", double(21));
}

#[cfg(test)]
mod tests {
    #[test]
    fn doubles() {
        assert_eq!(super::double(4), 8);
    }
}
