//! Call counts known by construction, for `cargo hookcc run --target aarch64-unknown-linux-gnu`
//! under qemu (tests/tests/rust.rs). `#![no_core]`: the few language items the program uses are
//! declared here, so the crate builds for a target whose standard library is not installed.
//!
//! fib(10): 177 calls. twice::<i32> ×2 and twice::<i64> ×1 (a generic instantiated twice).
//! apply ×3 calls through a function pointer: square ×2, negate ×1. main prints nothing and
//! returns 0 when every result is right (else the first wrong check's number).
#![feature(no_core, lang_items)]
#![allow(internal_features)]
#![no_core]
#![no_main]

#[lang = "pointee_sized"]
pub trait PointeeSized {}
#[lang = "meta_sized"]
pub trait MetaSized: PointeeSized {}
#[lang = "sized"]
pub trait Sized: MetaSized {}
#[lang = "legacy_receiver"]
pub trait LegacyReceiver {}
impl<T: PointeeSized> LegacyReceiver for &T {}
#[lang = "copy"]
pub trait Copy {}
impl Copy for i32 {}
impl Copy for i64 {}

#[lang = "add"]
pub trait Add<Rhs = Self> {
    type Output;
    fn add(self, rhs: Rhs) -> Self::Output;
}
impl Add for i32 {
    type Output = i32;
    fn add(self, rhs: i32) -> i32 {
        self + rhs
    }
}
impl Add for i64 {
    type Output = i64;
    fn add(self, rhs: i64) -> i64 {
        self + rhs
    }
}
#[lang = "sub"]
pub trait Sub<Rhs = Self> {
    type Output;
    fn sub(self, rhs: Rhs) -> Self::Output;
}
impl Sub for i32 {
    type Output = i32;
    fn sub(self, rhs: i32) -> i32 {
        self - rhs
    }
}
#[lang = "mul"]
pub trait Mul<Rhs = Self> {
    type Output;
    fn mul(self, rhs: Rhs) -> Self::Output;
}
impl Mul for i32 {
    type Output = i32;
    fn mul(self, rhs: i32) -> i32 {
        self * rhs
    }
}
#[lang = "neg"]
pub trait Neg {
    type Output;
    fn neg(self) -> Self::Output;
}
impl Neg for i32 {
    type Output = i32;
    fn neg(self) -> i32 {
        -self
    }
}
#[lang = "eq"]
pub trait PartialEq<Rhs: PointeeSized = Self> {
    fn eq(&self, other: &Rhs) -> bool;
    fn ne(&self, other: &Rhs) -> bool;
}
impl PartialEq for i32 {
    fn eq(&self, other: &i32) -> bool {
        *self == *other
    }
    fn ne(&self, other: &i32) -> bool {
        *self != *other
    }
}
impl PartialEq for i64 {
    fn eq(&self, other: &i64) -> bool {
        *self == *other
    }
    fn ne(&self, other: &i64) -> bool {
        *self != *other
    }
}
#[lang = "partial_ord"]
pub trait PartialOrd<Rhs: PointeeSized = Self> {
    fn lt(&self, other: &Rhs) -> bool;
}
impl PartialOrd for i32 {
    fn lt(&self, other: &i32) -> bool {
        *self < *other
    }
}

#[link(name = "c")]
extern "C" {}

#[inline(never)]
fn fib(n: i32) -> i32 {
    if n < 2 {
        n
    } else {
        fib(n - 1) + fib(n - 2)
    }
}

#[inline(never)]
fn twice<T: Copy + Add<Output = T>>(x: T) -> T {
    x + x
}

#[inline(never)]
fn square(x: i32) -> i32 {
    x * x
}

#[inline(never)]
fn negate(x: i32) -> i32 {
    -x
}

#[inline(never)]
fn apply(f: fn(i32) -> i32, x: i32) -> i32 {
    f(x)
}

#[no_mangle]
pub extern "C" fn main(_argc: i32, _argv: *const *const u8) -> i32 {
    if fib(10) != 55 {
        return 1;
    }
    if twice(3i32) + twice(4i32) != 14 || twice(5i64) != 10 {
        return 2;
    }
    if apply(square, 3) + apply(square, 4) + apply(negate, 5) != 20 {
        return 3;
    }
    0
}
