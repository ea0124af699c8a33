//! The generated functions whose size the scaling benchmarks grow (issue
//! 25): `compile_scaling` times compiling them, `sim_scaling` (in
//! `tests/benches/`) running the compiled code on one simulator lane. Each
//! is `function %f(i32) -> i32`:
//!
//! - `params`: one jump passing n values to n block parameters;
//! - `live`: n values live at once (a product chain summed in reverse);
//! - `blocks`: n blocks in a chain, a value carried through all;
//! - `insts`: n dependent instructions in one block.

pub const FAMILIES: [&str; 4] = ["params", "live", "blocks", "insts"];

/// The CLIF text of family `kind` at size `n`.
pub fn source(kind: &str, n: usize) -> String {
    let mut o = vec!["function %f(i32) -> i32 {".to_string(), "block0(v0: i32):".into(), "    v999999 = iconst.i32 7".into()];
    match kind {
        "params" => {
            for i in 1..=n {
                o.push(format!("    v{} = iadd v{}, v999999", i, i - 1));
            }
            let args: Vec<String> = (1..=n).map(|i| format!("v{}", i)).collect();
            o.push(format!("    jump block1({})", args.join(", ")));
            let base = n + 1;
            let params: Vec<String> = (0..n).map(|i| format!("v{}: i32", base + i)).collect();
            o.push(format!("block1({}):", params.join(", ")));
            let mut acc = base;
            for i in 1..n {
                o.push(format!("    v{} = iadd v{}, v{}", base + n + i, acc, base + i));
                acc = base + n + i;
            }
            o.push(format!("    return v{}", acc));
        }
        "live" => {
            for i in 1..=n {
                o.push(format!("    v{} = imul v0, v{}", i, i - 1));
            }
            let mut acc = n;
            for i in (1..n).rev() {
                o.push(format!("    v{} = iadd v{}, v{}", 2 * n - i, acc, i));
                acc = 2 * n - i;
            }
            o.push(format!("    return v{}", acc));
        }
        "blocks" => {
            for b in 0..n {
                o.push(format!("    v{} = iadd v{}, v999999", b + 1, b));
                o.push(format!("    jump block{}", b + 1));
                o.push(format!("block{}:", b + 1));
            }
            o.push(format!("    return v{}", n));
        }
        _ => {
            for i in 0..n {
                let op = if i % 2 == 1 { format!("iadd v{}, v999999", i) } else { format!("imul v{}, v{}", i, i) };
                o.push(format!("    v{} = {}", i + 1, op));
            }
            o.push(format!("    return v{}", n));
        }
    }
    o.push("}".into());
    o.join("\n")
}

/// What `%f(x)` returns for family `kind` at size `n` (i32 wrapping
/// arithmetic, as CLIF's): the benchmarks check each run against it.
pub fn expected(kind: &str, n: usize, x: i32) -> i32 {
    match kind {
        "params" => {
            // v_i = x + 7i; the sum of v_1..v_n.
            (1..=n).fold(0i32, |s, i| s.wrapping_add(x.wrapping_add(7i32.wrapping_mul(i as i32))))
        }
        "live" => {
            // v_0 = x, v_i = x * v_{i-1}: x^(i+1); the sum of v_1..v_n.
            let mut v = x;
            let mut s = 0i32;
            for _ in 1..=n {
                v = x.wrapping_mul(v);
                s = s.wrapping_add(v);
            }
            s
        }
        "blocks" => x.wrapping_add(7i32.wrapping_mul(n as i32)),
        _ => {
            let mut v = x;
            for i in 0..n {
                v = if i % 2 == 1 { v.wrapping_add(7) } else { v.wrapping_mul(v) };
            }
            v
        }
    }
}

/// The sizes: 1k doubling up to `$URSA_SCALING_MAX` (default 4000).
pub fn sizes() -> Vec<usize> {
    let max: usize = std::env::var("URSA_SCALING_MAX").ok().and_then(|s| s.parse().ok()).unwrap_or(4000);
    std::iter::successors(Some(1000), |n| Some(n * 2)).take_while(|&n| n <= max).collect()
}
