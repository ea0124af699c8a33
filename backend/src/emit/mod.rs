//! From allocated code to bytes: layout, branch clean-up, scheduling control bits, encoding.

pub mod auto_control;
pub mod calc_instr_deps;
pub mod encode;
pub mod lower_vcode;
pub mod opt_branches;
pub mod opt_copy_prop_backward;
