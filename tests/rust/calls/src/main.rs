//! Every function here is called a number of times known by construction; tests/tests/rust.rs
//! checks the counts hookprof reports. `#[inline(never)]` is deliberately absent: hookcc keeps
//! counts exact through inlining (MIR inlining is off, LLVM inlines after the hooks are in).

use std::hint::black_box;
use std::panic;

/// 177 calls for fib(10).
fn fib(n: u32) -> u32 {
    if n < 2 {
        n
    } else {
        fib(n - 1) + fib(n - 2)
    }
}

trait Shape {
    fn area(&self) -> f64;
}

struct Square(f64);
struct Circle(f64);

impl Shape for Square {
    fn area(&self) -> f64 {
        self.0 * self.0
    }
}

impl Shape for Circle {
    fn area(&self) -> f64 {
        3.0 * self.0 * self.0
    }
}

/// Calls its closure once per shape.
fn total_area(shapes: &[Box<dyn Shape>]) -> f64 {
    let mut total = 0.0;
    let mut add = |s: &dyn Shape| total += s.area();
    for s in shapes {
        add(s.as_ref());
    }
    total
}

/// Instantiated for i32 (called twice) and f64 (once).
fn largest<T: PartialOrd + Copy>(items: &[T]) -> T {
    let mut best = items[0];
    for &item in items {
        if item > best {
            best = item;
        }
    }
    best
}

/// Recurses down to 0 and panics there: 4 calls for descend(3), each left by unwinding.
fn descend(depth: u32) -> u32 {
    if depth == 0 {
        panic!("bottom");
    }
    descend(black_box(depth - 1)) + 1
}

/// Catches the panic of descend(3).
fn guarded() -> bool {
    panic::catch_unwind(|| descend(black_box(3))).is_err()
}

fn main() {
    // No panic message on stderr; the unwinding is the point.
    panic::set_hook(Box::new(|_| {}));
    let f = fib(black_box(10));
    let shapes: Vec<Box<dyn Shape>> = vec![
        Box::new(Square(1.0)),
        Box::new(Circle(1.0)),
        Box::new(Square(2.0)),
        Box::new(Circle(2.0)),
        Box::new(Square(3.0)),
    ];
    let area = total_area(black_box(&shapes));
    let a = largest(black_box(&[3, 9, 4]));
    let b = largest(black_box(&[-5, -2]));
    let c = largest(black_box(&[1.5, 0.5]));
    let caught = guarded();
    println!("fib={f} area={area} largest={a},{b},{c} caught={caught}");
}
