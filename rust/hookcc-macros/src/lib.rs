//! `#[no_hooks]` and `#[profile(on|off)]`, re-exported by the `hookcc` crate.
//!
//! Each leaves a mark hookcc's pass reads: a call to `hookcc::__private::hooks_off()` (or
//! `hooks_on()`) as the first statement of the function and of every closure in it. A call is
//! the one mark that reaches LLVM IR with the code it marks: every generic instance carries it,
//! and so does a closure, which rustc may put in another codegen unit than its function (a
//! mark on the function alone would not reach it there). The pass gives each function that
//! calls a marker the same "off"/"on" as C's pragmas, and deletes the call. Without hookcc the
//! markers are empty `#[inline(always)]` functions.

use proc_macro::TokenStream;
use quote::quote;
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::visit_mut::VisitMut;
use syn::{parse_macro_input, parse_quote, Expr, ExprClosure, Item, ItemFn, Macro, Token};

/// No hooks in this function, its closures and its generic instances
/// (`#pragma NO_HOOKS` / `no_instrument_function` in C).
#[proc_macro_attribute]
pub fn no_hooks(attr: TokenStream, item: TokenStream) -> TokenStream {
    if !attr.is_empty() {
        return syn::Error::new(
            proc_macro2::Span::call_site(),
            "#[hookcc::no_hooks] takes no arguments",
        )
        .to_compile_error()
        .into();
    }
    let function = parse_macro_input!(item as ItemFn);
    mark(function, quote!(::hookcc::__private::hooks_off()))
}

/// `#[profile(off)]`: as `#[no_hooks]`. `#[profile(on)]`: hooks in this function and its
/// closures even when the NITRO dialect's default is off (`--dialect=nitro` without
/// `-profile`), as `#pragma profile on` in C.
#[proc_macro_attribute]
pub fn profile(attr: TokenStream, item: TokenStream) -> TokenStream {
    let state = attr.to_string();
    let marker = match state.trim() {
        "off" => quote!(::hookcc::__private::hooks_off()),
        "on" => quote!(::hookcc::__private::hooks_on()),
        _ => {
            return syn::Error::new(
                proc_macro2::Span::call_site(),
                format!("#[hookcc::profile] takes `on` or `off`, not `{state}`"),
            )
            .to_compile_error()
            .into()
        }
    };
    let function = parse_macro_input!(item as ItemFn);
    mark(function, marker)
}

fn mark(mut function: ItemFn, marker: proc_macro2::TokenStream) -> TokenStream {
    MarkClosures {
        marker: marker.clone(),
    }
    .visit_block_mut(&mut function.block);
    function.block.stmts.insert(0, parse_quote!(#marker;));
    quote!(#function).into()
}

/// Puts the marker first in every closure of a body (nested ones included, and those in the
/// arguments of a macro whose arguments are expressions, as `println!`, `assert!` or
/// `vec![…]`), but not in the items (nested `fn`s) declared there: those are functions of their
/// own. (A closure in a macro whose arguments are not expressions gets its function's mark in
/// the pass, from its name, when the two are in one codegen unit.)
struct MarkClosures {
    marker: proc_macro2::TokenStream,
}

impl VisitMut for MarkClosures {
    fn visit_expr_closure_mut(&mut self, closure: &mut ExprClosure) {
        syn::visit_mut::visit_expr_closure_mut(self, closure);
        let marker = &self.marker;
        let body = &closure.body;
        let marked: Expr = parse_quote!({ #marker; #body });
        *closure.body = marked;
    }

    fn visit_item_mut(&mut self, _: &mut Item) {}

    fn visit_macro_mut(&mut self, mac: &mut Macro) {
        let parser = Punctuated::<Expr, Token![,]>::parse_terminated;
        let Ok(mut args) = parser.parse2(mac.tokens.clone()) else {
            return;
        };
        let before = quote!(#args).to_string();
        for arg in args.iter_mut() {
            self.visit_expr_mut(arg);
        }
        if quote!(#args).to_string() != before {
            mac.tokens = quote!(#args);
        }
    }
}
