//! Cranelift's own x86-64 backend, the yardstick of the compile-time
//! measurements, shared by the `compile_time` benchmark and the
//! `compile_loop` example (each includes it with `#[path]`).
//!
//! Like for like with Ursa's `compile`: the same `opt_level` on both sides
//! (`speed` runs Cranelift's e-graph pass on both), the verifier once on
//! each side (Cranelift gets `enable_verifier=false` and one explicit
//! `verify_function`, since `Context::compile` would verify four times), and
//! one `Context` per thread, cleared and reused as Cranelift intends (its
//! regalloc2 tables among them), as Ursa keeps its own per-thread state.

use std::cell::RefCell;

use cranelift_codegen::control::ControlPlane;
use cranelift_codegen::ir::Function;
use cranelift_codegen::isa::OwnedTargetIsa;
use cranelift_codegen::settings::Configurable;
use cranelift_codegen::{settings, Context};
use ursa_backend::OptLevel;

/// The x86-64 ISA at `level`, without the verifier (see the module's text).
pub fn x64(level: OptLevel) -> OwnedTargetIsa {
    let b = cranelift_codegen::isa::lookup_by_name("x86_64").expect("cranelift-codegen built with the x86 feature");
    let mut flags = settings::builder();
    let name = if level == OptLevel::None { "none" } else { "speed" };
    flags.set("opt_level", name).expect("cranelift has the opt_level setting");
    flags.set("enable_verifier", "false").expect("cranelift has the enable_verifier setting");
    b.finish(settings::Flags::new(flags)).expect("x86-64 ISA")
}

/// Verifies `f` once and compiles it for x86-64; whether both succeeded.
pub fn cranelift_compile(isa: &OwnedTargetIsa, f: &Function) -> bool {
    if cranelift_codegen::verifier::verify_function(f, isa.flags()).is_err() {
        return false;
    }
    thread_local! {
        static CTX: RefCell<Context> = RefCell::new(Context::new());
    }
    CTX.with(|ctx| {
        let mut ctx = ctx.borrow_mut();
        ctx.clear();
        ctx.func = f.clone();
        ctx.compile(&**isa, &mut ControlPlane::default()).is_ok()
    })
}

/// Whether both compilers accept `f` (a panic counts as no).
pub fn both_compile(isa: &OwnedTargetIsa, f: &Function, opts: &ursa_backend::Options) -> bool {
    let ursa = std::panic::catch_unwind(|| ursa_backend::compile(f, opts).is_ok()).unwrap_or(false);
    ursa && std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| cranelift_compile(isa, f))).unwrap_or(false)
}

/// The median of the ratios of paired timings, Ursa's over Cranelift's (the
/// upper one of an even count; NaN for none): what a pair costs when
/// neither side was interrupted.
pub fn median(ratios: &mut [f64]) -> f64 {
    ratios.sort_by(f64::total_cmp);
    ratios.get(ratios.len() / 2).copied().unwrap_or(f64::NAN)
}
