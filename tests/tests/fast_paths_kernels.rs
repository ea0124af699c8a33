//! Differential test of the simulator's fast paths (`LaunchConfig::engine`)
//! on compiled code: every kernel of `examples/kernels/` is launched over a
//! grid whose CTAs end in a partial warp, with every pointer parameter given
//! its own buffer of patterned bytes, every 32-bit integer parameter a small
//! count (40 or so: `n`, or a matrix's side) and every float parameter 2.5
//! or so, with each engine, in default, strict and
//! profiling mode. Output memory, traps and statistics (cycles, per-form
//! counts, the profile) must equal those of the run on the interpreter
//! alone. (Generated programs get the same treatment in
//! `runtime-sim/tests/fast_paths.rs`. The filetests' run lines call
//! functions on one lane, where these full-warp paths never apply.)
//!
//! The launches run on a one-thread rayon pool, so CTAs run one after the
//! other in CTA order: the 2 × 2 grid of 48 × 2 threads makes the
//! one-dimensional kernels' CTAs and warps write the same elements (four
//! threads per `y[i]` of `daxpy_f64`), a race whose outcome on the parallel
//! path depends on which CTA's read-modify-write comes first.

use ursa_emit::elf;
use ursa_sim::{Arg, Engine, Gpu, LaunchConfig, Program, Stats, Trap};
use ursa_tests::kernels::{compile_file, example_files, examples_dir};

/// Bytes of each buffer argument.
const BUFFER: u64 = 64 << 10;

const MODES: [Engine; 4] = [Engine::Interpreter, Engine::Threaded, Engine::IssueLoop, Engine::Jit];

/// Launches `kernel`; returns the result and every buffer's final bytes.
fn launch(prog: &Program, kernel: &str, cfg: &LaunchConfig) -> (Result<Stats, Trap>, Vec<Vec<u8>>) {
    let f = prog.function(kernel).expect("kernel");
    let mut gpu = Gpu::new();
    let mut args = Vec::new();
    let mut buffers = Vec::new();
    for (i, p) in f.params.iter().enumerate() {
        args.push(match (p.kind, p.size) {
            (elf::ParamKind::Float, 4) => Arg::F32(2.5 + i as f32),
            (elf::ParamKind::Float, _) => Arg::F64(2.5 + i as f64),
            (_, 8) => {
                let at = gpu.alloc(BUFFER, 16);
                let bytes: Vec<u8> = (0..BUFFER).map(|k| (k as u8).wrapping_mul(29).wrapping_add(i as u8 * 71 + 5)).collect();
                gpu.write(at, &bytes).expect("write");
                buffers.push(at);
                Arg::Ptr(at)
            }
            (_, 4) => Arg::U32(40 + i as u32),
            (_, n) => Arg::Bytes(vec![3; n as usize]),
        });
    }
    let res = gpu.launch(prog, kernel, cfg, &args);
    (res, buffers.iter().map(|&b| gpu.read(b, BUFFER).expect("read")).collect())
}

#[test]
fn example_kernels_agree_with_and_without_fast_paths() {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().expect("one-thread pool");
    pool.install(check_example_kernels);
}

fn check_example_kernels() {
    let files = example_files(&examples_dir()).expect("examples");
    assert!(files.len() >= 10, "{} example files", files.len());
    let mut launched = 0;
    for file in files {
        for k in compile_file(&file).expect("compile") {
            let function = k.result.unwrap_or_else(|e| panic!("{}: %{}: {}", file.display(), k.name, e));
            let mut obj = elf::Object { functions: vec![function], ..Default::default() };
            ursa_backend::link_runtime(&mut obj).expect("the runtime's routines compile");
            let prog = Program::load(&elf::write(&obj)).expect("load");
            // CTAs of 96 threads (three warps) in a 2 × 2 grid; shared
            // memory for the kernels that take it dynamically.
            let base = LaunchConfig {
                grid: [2, 2, 1],
                block: [48, 2, 1],
                step_limit: Some(4_000_000),
                shared_size: 4096,
                jit_threshold: 1,
                ..Default::default()
            };
            for (strict, profile) in [(false, false), (true, false), (false, true)] {
                let run = |engine| launch(&prog, &k.name, &LaunchConfig { engine, strict, profile, ..base.clone() });
                let reference = run(MODES[0]);
                // Every kernel runs to completion (a trap in every mode
                // would compare little).
                if let Err(t) = &reference.0 {
                    panic!("{} (strict {}, profile {}): {}", k.name, strict, profile, t);
                }
                for &mode in &MODES[1..] {
                    let got = run(mode);
                    let what = format!("{} (strict {}, profile {}) with {:?}", k.name, strict, profile, mode);
                    assert!(got.1 == reference.1, "{}: memory differs", what);
                    assert_eq!(got.0, reference.0, "{}: result differs", what);
                }
            }
            launched += 1;
        }
    }
    assert!(launched >= 10, "{} kernels", launched);
}
