//! Facts about a whole module that the compilation of each function reads,
//! and the module as a frontend builds it ([`ursa_module::UrsaModule`], a
//! `cranelift_module::Module`; [`kernel_builder::KernelBuilder`], kernels
//! written with `FunctionBuilder` and the intrinsics).

pub mod call_graph;
pub mod call_stack;
pub mod kernel_builder;
pub mod runtime;
pub mod shared_mem;
pub mod ursa_module;

use cranelift_codegen::ir::Function;

/// The symbol name of a CLIF function in the object file (`%name` → `name`;
/// names assembly cannot hold are mapped, see [`ursa_isel::lower::object_symbol`]).
pub fn symbol_name(f: &Function) -> String {
    ursa_isel::lower::object_symbol(&ursa_isel::lower::clif_name(&f.name))
}
