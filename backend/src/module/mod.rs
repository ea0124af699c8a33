//! Facts about a whole module that the compilation of each function reads.

pub mod call_graph;
pub mod call_stack;
pub mod shared_mem;

use cranelift_codegen::ir::Function;

/// The symbol name of a CLIF function in the object file (`%name` → `name`;
/// names assembly cannot hold are mapped, see [`ursa_isel::lower::object_symbol`]).
pub fn symbol_name(f: &Function) -> String {
    ursa_isel::lower::object_symbol(&f.name.to_string())
}
