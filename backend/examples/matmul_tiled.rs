//! A tiled matrix multiply with shared memory, built from Rust with
//! `FunctionBuilder` and `KernelBuilder`, compiled through `UrsaModule`,
//! launched on the simulator and checked against the host:
//!
//!     cargo run --release --example matmul_tiled [N]
//!
//! `C = A × B` for `N × N` `f32` matrices (`N` a multiple of the tile, 32 by
//! default). Each CTA computes one `TILE × TILE` tile of `C`: per step it
//! loads a tile of `A` and one of `B` into shared memory, waits at the
//! barrier, and accumulates their product — the CUDA programming guide's
//! shared-memory matrix multiply:
//!
//! ```text
//! __shared__ float as[TILE][TILE], bs[TILE][TILE];
//! int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
//! float acc = 0;
//! for (int t = 0; t < n; t += TILE) {
//!     as[threadIdx.y][threadIdx.x] = a[row * n + t + threadIdx.x];
//!     bs[threadIdx.y][threadIdx.x] = b[(t + threadIdx.y) * n + col];
//!     __syncthreads();
//!     for (int k = 0; k < TILE; k++) acc += as[threadIdx.y][k] * bs[k][threadIdx.x];
//!     __syncthreads();
//! }
//! c[row * n + col] = acc;
//! ```

use cranelift_codegen::ir::{condcodes::IntCC, types, AbiParam, InstBuilder, MemFlagsData};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_module::{Linkage, Module, ModuleResult};
use ursa_backend::module::kernel_builder::{Dim, KernelBuilder};
use ursa_backend::{OptLevel, UrsaModule};

/// The tile edge (threads per CTA: `TILE × TILE`).
pub const TILE: u32 = 8;

/// The optimization level the example compiles at.
pub const OPT_LEVEL: OptLevel = OptLevel::Speed;

/// The ELF object holding the kernel `matmul(a: i64, b: i64, c: i64, n: i32)`,
/// compiled at `level`.
pub fn build(level: OptLevel) -> ModuleResult<Vec<u8>> {
    let mut module = UrsaModule::with_options(ursa_backend::Options { opt_level: level, ..Default::default() });
    let tile_bytes = TILE * TILE * 4;
    let as_tile = module.declare_shared("as", tile_bytes, 16)?;
    let bs_tile = module.declare_shared("bs", tile_bytes, 16)?;
    let mut ctx = module.make_context();
    for ty in [types::I64, types::I64, types::I64, types::I32] {
        ctx.func.signature.params.push(AbiParam::new(ty));
    }
    let id = module.declare_function("matmul", Linkage::Export, &ctx.func.signature)?;
    let mut fctx = FunctionBuilderContext::new();
    let mut b = FunctionBuilder::new(&mut ctx.func, &mut fctx);
    let (entry, head, body, exit) = (b.create_block(), b.create_block(), b.create_block(), b.create_block());
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    let [a, bm, c, n] = b.block_params(entry).try_into().expect("four parameters");
    let mut k = KernelBuilder::new(&mut module, &mut b);
    let flags = MemFlagsData::trusted();
    let (tx, ty) = (k.thread_idx(Dim::X)?, k.thread_idx(Dim::Y)?);
    let (bx, by) = (k.block_idx(Dim::X)?, k.block_idx(Dim::Y)?);
    let row = k.ins().imul_imm_u(by, TILE as i64);
    let row = k.ins().iadd(row, ty);
    let col = k.ins().imul_imm_u(bx, TILE as i64);
    let col = k.ins().iadd(col, tx);
    // This thread's element of each tile, the start of its row of `as` and
    // of its column of `bs`.
    let (sa, sb) = (k.shared(as_tile), k.shared(bs_tile));
    let slot = k.ins().imul_imm_u(ty, TILE as i64);
    let row_start = slot;
    let slot = k.ins().iadd(slot, tx);
    let (sa_mine, sb_mine) = (k.element_addr(sa, slot, 4), k.element_addr(sb, slot, 4));
    let (sa_row, sb_col) = (k.element_addr(sa, row_start, 4), k.element_addr(sb, tx, 4));
    let t = k.declare_var(types::I32);
    let acc = k.declare_var(types::F32);
    let zero = k.ins().iconst(types::I32, 0);
    k.def_var(t, zero);
    let fzero = k.ins().f32const(0.0);
    k.def_var(acc, fzero);
    k.ins().jump(head, &[]);

    k.switch_to_block(head);
    let tv = k.use_var(t);
    let more = k.ins().icmp(IntCC::UnsignedLessThan, tv, n);
    k.ins().brif(more, body, &[], exit, &[]);

    k.switch_to_block(body);
    let tv = k.use_var(t);
    let ai = k.ins().imul(row, n);
    let ai = k.ins().iadd(ai, tv);
    let ai = k.ins().iadd(ai, tx);
    let at = k.element_addr(a, ai, 4);
    let av = k.ins().load(types::F32, flags, at, 0);
    k.ins().store(flags, av, sa_mine, 0);
    let bi = k.ins().iadd(tv, ty);
    let bi = k.ins().imul(bi, n);
    let bi = k.ins().iadd(bi, col);
    let bt = k.element_addr(bm, bi, 4);
    let bv = k.ins().load(types::F32, flags, bt, 0);
    k.ins().store(flags, bv, sb_mine, 0);
    k.sync_threads()?;
    let mut sum = k.use_var(acc);
    for kk in 0..TILE as i32 {
        let x = k.ins().load(types::F32, flags, sa_row, 4 * kk);
        let y = k.ins().load(types::F32, flags, sb_col, 4 * kk * TILE as i32);
        let p = k.ins().fmul(x, y);
        sum = k.ins().fadd(sum, p);
    }
    k.def_var(acc, sum);
    k.sync_threads()?;
    let next = k.ins().iadd_imm_u(tv, TILE as i64);
    k.def_var(t, next);
    k.ins().jump(head, &[]);

    k.switch_to_block(exit);
    let ci = k.ins().imul(row, n);
    let ci = k.ins().iadd(ci, col);
    let ct = k.element_addr(c, ci, 4);
    let result = k.use_var(acc);
    k.ins().store(flags, result, ct, 0);
    k.ins().return_(&[]);
    b.seal_all_blocks();
    b.finalize(module.target_config());
    module.define_function(id, &mut ctx)?;
    module.finish()
}

/// The inputs of the `n × n` multiply: small integers, so every product and
/// sum is exact in `f32` and the device must match the host bit for bit.
pub fn inputs(n: usize) -> (Vec<f32>, Vec<f32>) {
    let a = (0..n * n).map(|e| ((e / n * 3 + e % n) % 7) as f32 - 3.0).collect();
    let b = (0..n * n).map(|e| ((e / n + 2 * (e % n)) % 5) as f32 - 2.0).collect();
    (a, b)
}

/// The host's `a × b`.
pub fn host_matmul(a: &[f32], b: &[f32], n: usize) -> Vec<f32> {
    let mut c = vec![0.0f32; n * n];
    for i in 0..n {
        for j in 0..n {
            c[i * n + j] = (0..n).fold(0.0, |acc, k| acc + a[i * n + k] * b[k * n + j]);
        }
    }
    c
}

/// Builds, loads and launches the kernel on `n × n` matrices; the device's
/// `C`, the host's, and the simulated cycles.
pub fn run(n: u32) -> Result<(Vec<f32>, Vec<f32>, u64), String> {
    if n == 0 || n % TILE != 0 {
        return Err(format!("N = {} is not a positive multiple of the tile ({})", n, TILE));
    }
    let bytes = build(OPT_LEVEL).map_err(|e| e.to_string())?;
    let (a, b) = inputs(n as usize);
    // The host API (`ursa_sim::host`): typed buffers, a checked launch.
    let dev = ursa_sim::host::Device::new();
    let matmul = dev.load_module(&bytes).and_then(|m| m.kernel("matmul")).map_err(|e| e.to_string())?;
    let da = dev.buffer_from(&a).map_err(|e| e.to_string())?;
    let db = dev.buffer_from(&b).map_err(|e| e.to_string())?;
    let dc = dev.alloc_zeros::<f32>(a.len()).map_err(|e| e.to_string())?;
    let launch = matmul.launch((n / TILE, n / TILE), (TILE, TILE), 0, &[&da, &db, &dc, &n]).map_err(|e| e.to_string())?;
    let stats = launch.stats();
    let got = dc.to_vec().map_err(|e| e.to_string())?;
    Ok((got, host_matmul(&a, &b, n as usize), stats.cycles))
}

#[allow(dead_code)]
fn main() {
    let n = match std::env::args().nth(1).map(|s| s.parse::<u32>()) {
        None => 32,
        Some(Ok(n)) => n,
        Some(Err(e)) => {
            eprintln!("matmul_tiled: N: {}", e);
            std::process::exit(2);
        }
    };
    match run(n) {
        Ok((got, want, cycles)) => {
            let wrong = got.iter().zip(&want).filter(|(g, w)| g.to_bits() != w.to_bits()).count();
            println!(
                "matmul {n}x{n} f32, {TILE}x{TILE} tiles in shared memory: {} of {} elements match the host, {} cycles",
                got.len() - wrong,
                got.len(),
                cycles
            );
            if wrong != 0 {
                std::process::exit(1);
            }
        }
        Err(e) => {
            eprintln!("matmul_tiled: {}", e);
            std::process::exit(1);
        }
    }
}
