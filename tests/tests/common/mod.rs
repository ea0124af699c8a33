//! Helpers shared by the sweep tests (`div_sweep.rs`, `fdiv_sweep.rs`) and
//! the float operand tests (`float_random.rs`, `f16_random.rs`).

/// The CLIF text of kernel `%name(a, b, out, n)`: for every global thread
/// index `i < n`, loads `x = a[i]` and `y = b[i]` of type `ty` (as values
/// `v15` and `v16`), runs `body` (which must define `v17` from them) and
/// stores `v17` to `out[i]` (the buffers are aligned to their element size).
#[allow(dead_code)]
pub fn elementwise_kernel(name: &str, ty: &str, body: &str) -> String {
    let shift = match ty {
        "i8" => 0,
        "i16" => 1,
        "i32" | "f32" => 2,
        _ => 3,
    };
    format!(
        "function %{name}(i64, i64, i64, i32) {{
    fn0 = %ursa_tid_x() -> i32
    fn1 = %ursa_ctaid_x() -> i32
    fn2 = %ursa_ntid_x() -> i32
block0(v0: i64, v1: i64, v2: i64, v3: i32):
    v4 = call fn0()
    v5 = call fn1()
    v6 = call fn2()
    v7 = imul v5, v6
    v8 = iadd v7, v4
    v9 = icmp ult v8, v3
    brif v9, block1, block2
block1:
    v10 = uextend.i64 v8
    v18 = iconst.i64 {shift}
    v11 = ishl v10, v18
    v12 = iadd v0, v11
    v13 = iadd v1, v11
    v14 = iadd v2, v11
    v15 = load.{ty} aligned v12
    v16 = load.{ty} aligned v13
    {body}
    store aligned v17, v14
    jump block2
block2:
    return
}}
"
    )
}

/// The 14 `fcmp` conditions, each with whether it holds for the operands'
/// ordering: unordered, less, equal, greater ([`ordering_index`]).
#[allow(dead_code)]
pub const FCMP_CONDS: [(&str, [bool; 4]); 14] = [
    ("eq", [false, false, true, false]),
    ("ne", [true, true, false, true]),
    ("one", [false, true, false, true]),
    ("ueq", [true, false, true, false]),
    ("lt", [false, true, false, false]),
    ("le", [false, true, true, false]),
    ("gt", [false, false, false, true]),
    ("ge", [false, false, true, true]),
    ("ult", [true, true, false, false]),
    ("ule", [true, true, true, false]),
    ("ugt", [true, false, false, true]),
    ("uge", [true, false, true, true]),
    ("ord", [false, true, true, true]),
    ("uno", [true, false, false, false]),
];

/// The column of [`FCMP_CONDS`] for a `partial_cmp` result.
#[allow(dead_code)]
pub fn ordering_index(o: Option<std::cmp::Ordering>) -> usize {
    match o {
        None => 0,
        Some(std::cmp::Ordering::Less) => 1,
        Some(std::cmp::Ordering::Equal) => 2,
        Some(std::cmp::Ordering::Greater) => 3,
    }
}
