//! `ursa run`: launch a kernel of an object on the simulator, a client of
//! the typed host API (`ursa_sim::host`): it turns the text of the arguments
//! into buffers and scalars; the host API checks them against the kernel's
//! `.param` table and launches.
//!
//! Arguments, in parameter order:
//! - scalars `TYPE:VALUE` (`u32:7`, `i64:-1`, `i128:-1`, `f32:1.5`), each in
//!   its type's range,
//! - buffers `buf:NAME=TYPE[N]` (N zeroed elements), `buf:NAME=TYPE:v1,v2,…`
//!   (inline values; `buf:NAME=TYPE:` is empty), `buf:NAME=TYPE:file:PATH`
//!   (the file's bytes, a whole number of elements) or `buf:NAME=file:PATH`
//!   (the file's bytes as `u8`), passed as pointers.
//!
//! `--out NAME` prints a buffer after the run, as values of its type.
//! Arguments may come from files (`@FILE`, `crate::argsfile`); errors about
//! one of them name its file and line.
//!
//! A buffer holds at most [`MAX_BUFFER_BYTES`]; a larger size (or a file that
//! goes on past it, such as `/dev/zero`) is refused before anything is
//! allocated or read past the limit.

use std::path::Path;

use ursa_sim::host::{Device, DeviceBuffer, HostError, KernelArg};
use ursa_sim::LaunchConfig;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Elem {
    U8,
    I8,
    U16,
    I16,
    U32,
    I32,
    U64,
    I64,
    U128,
    I128,
    F32,
    F64,
}

impl Elem {
    fn parse(s: &str) -> Option<Elem> {
        Some(match s {
            "u8" => Elem::U8,
            "i8" => Elem::I8,
            "u16" => Elem::U16,
            "i16" => Elem::I16,
            "u32" => Elem::U32,
            "i32" => Elem::I32,
            "u64" => Elem::U64,
            "i64" => Elem::I64,
            "u128" => Elem::U128,
            "i128" => Elem::I128,
            "f32" => Elem::F32,
            "f64" => Elem::F64,
            _ => return None,
        })
    }
    /// The type as written in an argument (`i32`).
    fn name(self) -> &'static str {
        match self {
            Elem::U8 => "u8",
            Elem::I8 => "i8",
            Elem::U16 => "u16",
            Elem::I16 => "i16",
            Elem::U32 => "u32",
            Elem::I32 => "i32",
            Elem::U64 => "u64",
            Elem::I64 => "i64",
            Elem::U128 => "u128",
            Elem::I128 => "i128",
            Elem::F32 => "f32",
            Elem::F64 => "f64",
        }
    }
    fn size(self) -> usize {
        match self {
            Elem::U8 | Elem::I8 => 1,
            Elem::U16 | Elem::I16 => 2,
            Elem::U32 | Elem::I32 | Elem::F32 => 4,
            Elem::U64 | Elem::I64 | Elem::F64 => 8,
            Elem::U128 | Elem::I128 => 16,
        }
    }
    /// Little-endian bytes of one value written in text: an integer in the
    /// type's range (no negative unsigned value), a float that is finite
    /// unless written as `inf` or `NaN`. `Err` says why not.
    fn encode(self, v: &str) -> Result<Vec<u8>, String> {
        let not = || format!("`{}` is not a value of type {}", v, self.name());
        // A float too large for the type parses as infinity: an error,
        // unless infinity is what is written.
        let finite = |inf: bool| {
            let word = v.trim_start_matches(['+', '-']).to_ascii_lowercase();
            if inf && word != "inf" && word != "infinity" {
                Err(format!("`{}` is beyond the range of {}", v, self.name()))
            } else {
                Ok(())
            }
        };
        match self {
            Elem::F32 => {
                let x = v.parse::<f32>().map_err(|_| not())?;
                finite(x.is_infinite())?;
                return Ok(x.to_le_bytes().to_vec());
            }
            Elem::F64 => {
                let x = v.parse::<f64>().map_err(|_| not())?;
                finite(x.is_infinite())?;
                return Ok(x.to_le_bytes().to_vec());
            }
            _ => {}
        }
        if self == Elem::U128 {
            // Past i128::MAX, which `parse_int` cannot give.
            let x = match v.strip_prefix("0x") {
                Some(h) => u128::from_str_radix(h, 16),
                None => v.parse::<u128>(),
            };
            return Ok(x.map_err(|_| not())?.to_le_bytes().to_vec());
        }
        let x = ursa_emit::text::parse_int(v).ok_or_else(not)?;
        let bits = 8 * self.size() as u32;
        let signed = matches!(self, Elem::I8 | Elem::I16 | Elem::I32 | Elem::I64 | Elem::I128);
        let (lo, hi) = match (signed, bits) {
            (_, 128) => (i128::MIN, i128::MAX),
            (true, _) => (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1),
            (false, _) => (0, (1i128 << bits) - 1),
        };
        if !(lo..=hi).contains(&x) {
            return Err(format!("`{}` is outside the range of {} ({} to {})", v, self.name(), lo, hi));
        }
        Ok(x.to_le_bytes()[..self.size()].to_vec())
    }
    fn show(self, b: &[u8]) -> String {
        match self {
            Elem::U8 => b[0].to_string(),
            Elem::I8 => (b[0] as i8).to_string(),
            Elem::U16 => u16::from_le_bytes([b[0], b[1]]).to_string(),
            Elem::I16 => i16::from_le_bytes([b[0], b[1]]).to_string(),
            Elem::U32 => u32::from_le_bytes(b[..4].try_into().unwrap()).to_string(),
            Elem::I32 => i32::from_le_bytes(b[..4].try_into().unwrap()).to_string(),
            Elem::U64 => u64::from_le_bytes(b[..8].try_into().unwrap()).to_string(),
            Elem::I64 => i64::from_le_bytes(b[..8].try_into().unwrap()).to_string(),
            Elem::U128 => u128::from_le_bytes(b[..16].try_into().unwrap()).to_string(),
            Elem::I128 => i128::from_le_bytes(b[..16].try_into().unwrap()).to_string(),
            Elem::F32 => format!("{:?}", f32::from_le_bytes(b[..4].try_into().unwrap())),
            Elem::F64 => format!("{:?}", f64::from_le_bytes(b[..8].try_into().unwrap())),
        }
    }
    /// The scalar argument of the little-endian bytes of one value ([`Elem::encode`]).
    fn arg(self, b: &[u8]) -> KernelArg {
        match self {
            Elem::U8 => KernelArg::scalar(b[0]),
            Elem::I8 => KernelArg::scalar(b[0] as i8),
            Elem::U16 => KernelArg::scalar(u16::from_le_bytes([b[0], b[1]])),
            Elem::I16 => KernelArg::scalar(i16::from_le_bytes([b[0], b[1]])),
            Elem::U32 => KernelArg::scalar(u32::from_le_bytes(b[..4].try_into().unwrap())),
            Elem::I32 => KernelArg::scalar(i32::from_le_bytes(b[..4].try_into().unwrap())),
            Elem::U64 => KernelArg::scalar(u64::from_le_bytes(b[..8].try_into().unwrap())),
            Elem::I64 => KernelArg::scalar(i64::from_le_bytes(b[..8].try_into().unwrap())),
            Elem::U128 => KernelArg::scalar(u128::from_le_bytes(b[..16].try_into().unwrap())),
            Elem::I128 => KernelArg::scalar(i128::from_le_bytes(b[..16].try_into().unwrap())),
            Elem::F32 => KernelArg::scalar(f32::from_le_bytes(b[..4].try_into().unwrap())),
            Elem::F64 => KernelArg::scalar(f64::from_le_bytes(b[..8].try_into().unwrap())),
        }
    }
}

/// The largest buffer argument, in bytes (256 MiB).
pub const MAX_BUFFER_BYTES: u64 = 256 << 20;

/// Bytes of `n` elements of `elem`, if within [`MAX_BUFFER_BYTES`].
fn buffer_bytes(n: &str, elem: Elem) -> Result<usize, String> {
    let count: u64 = n.trim().parse().map_err(|_| format!("`{}` is not an element count", n))?;
    match count.checked_mul(elem.size() as u64) {
        Some(b) if b <= MAX_BUFFER_BYTES => Ok(b as usize),
        _ => Err(format!("{} elements of {:?} exceed the buffer limit of {} bytes (256 MiB)", count, elem, MAX_BUFFER_BYTES)),
    }
}

/// A buffer argument: its name, its element type (for `--out`) and its bytes on the device.
struct Buffer {
    name: String,
    elem: Elem,
    data: DeviceBuffer<u8>,
}

pub struct RunArgs<'a> {
    pub input: &'a Path,
    pub kernel: &'a str,
    pub grid: &'a str,
    pub block: &'a str,
    pub args: &'a [String],
    /// Where each of `args` comes from, if from a file (`@FILE`): `FILE:LINE`,
    /// for errors (shorter than `args`, or empty: the rest from the command line).
    pub arg_origins: &'a [Option<String>],
    pub outs: &'a [String],
    pub stats: bool,
    pub trace: bool,
    pub strict: bool,
    pub step_limit: Option<u64>,
    pub memory_limit: Option<u64>,
    /// Dynamic shared memory per CTA (bytes), after the kernel's static shared memory.
    pub shared: u32,
    pub profile: bool,
    pub timeline: Option<&'a Path>,
    /// `--timing warp|sm` (None: $URSA_TIMING, else `warp`).
    pub timing: Option<&'a str>,
    /// `--machine FILE`: overrides of the SM model's machine description.
    pub machine: Option<&'a Path>,
}

/// The SM model's machine description if `--timing`, `--machine` or
/// `$URSA_TIMING` asks for it (None: the per-warp issue model).
pub fn machine_desc(timing: Option<&str>, machine: Option<&Path>) -> Result<Option<ursa_sim::machine_desc::MachineDesc>, String> {
    let env = std::env::var("URSA_TIMING").ok();
    let choice = timing.map(str::to_string).or(env.clone());
    let sm = match choice.as_deref() {
        None | Some("") => machine.is_some(),
        Some("sm") => true,
        Some("warp") => {
            if machine.is_some() && timing.is_some() {
                return Err("--machine describes the SM model; it cannot be used with --timing warp".into());
            }
            machine.is_some()
        }
        Some(other) => {
            let from = if timing.is_some() { "--timing" } else { "$URSA_TIMING" };
            return Err(format!("{} is `warp` or `sm`, not `{}`", from, other));
        }
    };
    if !sm {
        return Ok(None);
    }
    let mut d = ursa_sim::machine_desc::MachineDesc::default();
    if let Some(path) = machine {
        let text = std::fs::read_to_string(path).map_err(|e| format!("--machine {}: {}", path.display(), e))?;
        d.apply(&text).map_err(|e| format!("--machine {}: {}", path.display(), e))?;
    }
    Ok(Some(d))
}

/// The largest CTA (`--block`) in each dimension, as in CUDA; the simulator
/// also allows at most 1024 threads in all.
pub const MAX_BLOCK: [u32; 3] = [1024, 1024, 64];
/// The largest grid (`--grid`) in each dimension, as in CUDA.
pub const MAX_GRID: [u32; 3] = [(1 << 31) - 1, 65535, 65535];

/// `--grid`/`--block` (`what`) `X[,Y[,Z]]`, each from 1 to `max`.
fn dims(s: &str, what: &str, max: [u32; 3]) -> Result<[u32; 3], String> {
    let parts: Vec<&str> = s.split(',').collect();
    if parts.is_empty() || parts.len() > 3 {
        return Err(format!("--{} takes X[,Y[,Z]], found `{}`", what, s));
    }
    let mut d = [1u32; 3];
    for (i, p) in parts.iter().enumerate() {
        let axis = ["X", "Y", "Z"][i];
        let n = p.trim().parse::<u128>().map_err(|_| format!("--{}: {} = `{}` is not a positive integer", what, axis, p))?;
        if n == 0 || n > max[i] as u128 {
            return Err(format!("--{}: {} = {} is outside 1 to {} (CUDA's limit)", what, axis, n, max[i]));
        }
        d[i] = n as u32;
    }
    Ok(d)
}

/// The characters of an argument an error quotes; a longer one is cut.
const SHOWN_SPEC_CHARS: usize = 80;

/// What a buffer argument may be.
const BUFFER_FORMS: &str = "expected buf:NAME=TYPE[N], buf:NAME=TYPE:v1,v2, buf:NAME=TYPE:file:PATH or buf:NAME=file:PATH";

/// The data of a buffer argument `buf:NAME=DEF` (`DEF` without the name)
/// and its element type.
fn buffer_data(def: &str) -> Result<(Elem, Vec<u8>), String> {
    let file = |path: &str| crate::input::read_bounded(Path::new(path), MAX_BUFFER_BYTES, "buffer");
    if let Some(path) = def.strip_prefix("file:") {
        return Ok((Elem::U8, file(path)?));
    }
    let (elem, rest) = match def.find(['[', ':']) {
        Some(at) => (&def[..at], &def[at..]),
        None => return Err(BUFFER_FORMS.into()),
    };
    let elem = Elem::parse(elem).ok_or_else(|| format!("unknown element type `{}`", elem))?;
    if let Some(n) = rest.strip_prefix('[') {
        let n = n.strip_suffix(']').ok_or("expected TYPE[N]")?;
        return Ok((elem, vec![0u8; buffer_bytes(n, elem)?]));
    }
    let vals = &rest[1..];
    if let Some(path) = vals.strip_prefix("file:") {
        let data = file(path)?;
        if data.len() % elem.size() != 0 {
            return Err(format!("{}: {} bytes are not a whole number of {} ({} bytes each)", path, data.len(), elem.name(), elem.size()));
        }
        return Ok((elem, data));
    }
    let mut data = Vec::new();
    // `TYPE:` alone is an empty buffer.
    for v in vals.split(',').filter(|_| !vals.trim().is_empty()) {
        data.extend(elem.encode(v.trim())?);
        if data.len() as u64 > MAX_BUFFER_BYTES {
            return Err(format!("more values than the buffer limit of {} bytes", MAX_BUFFER_BYTES));
        }
    }
    Ok((elem, data))
}

pub fn run(a: RunArgs) -> Result<(), String> {
    if let Some(t) = a.timeline {
        let same = |x: &Path, y: &Path| x == y || std::fs::canonicalize(x).ok().is_some_and(|c| std::fs::canonicalize(y).ok() == Some(c));
        if same(t, a.input) {
            return Err(format!("--timeline {}: that is the input object; the trace would overwrite it", t.display()));
        }
    }
    let bytes = crate::input::read_input(a.input)?;
    let device = Device::new();
    let module = device.load_module(&bytes).map_err(|e| format!("{}: {}", a.input.display(), e))?;
    let which = |k: &[String]| format!("the kernels of {}: {}", a.input.display(), if k.is_empty() { "none".into() } else { k.join(", ") });
    let kernel = module.kernel(a.kernel).map_err(|e| match e {
        HostError::NoKernel { kernels, .. } => format!("--kernel {}: no function of that name ({})", a.kernel, which(&kernels)),
        HostError::NotAKernel { kernels, .. } => format!("--kernel {}: a device function, not a kernel ({})", a.kernel, which(&kernels)),
        e => e.to_string(),
    })?;
    // `argument N (`SPEC`)`, after `FILE:LINE: ` for an argument from a file;
    // a long SPEC (inline data) cut to its start.
    let argument = |i: usize| {
        let origin = a.arg_origins.get(i).cloned().flatten().map(|o| format!("{}: ", o)).unwrap_or_default();
        let spec = &a.args[i];
        let shown = match spec.char_indices().nth(SHOWN_SPEC_CHARS) {
            Some((cut, _)) => format!("{}…", &spec[..cut]),
            None => spec.clone(),
        };
        format!("{}argument {} (`{}`)", origin, i + 1, shown)
    };
    let mut buffers: Vec<Buffer> = Vec::new();
    let mut kargs = Vec::new();
    for (i, spec) in a.args.iter().enumerate() {
        let bad = |m: &str| format!("{}: {}", argument(i), m);
        if let Some(b) = spec.strip_prefix("buf:") {
            let (name, def) = b.split_once('=').ok_or_else(|| bad(BUFFER_FORMS))?;
            if name.is_empty() {
                return Err(bad("the buffer has no name (buf:NAME=…)"));
            }
            if buffers.iter().any(|b| b.name == name) {
                return Err(bad(&format!("a buffer named `{}` is given twice", name)));
            }
            let (elem, data) = buffer_data(def).map_err(|e| bad(&e))?;
            let data = device.buffer_from(&data).map_err(|e| bad(&e.to_string()))?;
            kargs.push(KernelArg::buffer(&data));
            buffers.push(Buffer { name: name.to_string(), elem, data });
        } else {
            let (ty, v) = spec.split_once(':').ok_or_else(|| bad("expected TYPE:VALUE or buf:…"))?;
            let elem = Elem::parse(ty).ok_or_else(|| bad(&format!("unknown type `{}`", ty)))?;
            kargs.push(elem.arg(&elem.encode(v).map_err(|e| bad(&e))?));
        }
    }
    let args: Vec<&dyn ursa_sim::host::AsKernelArg> = kargs.iter().map(|k| k as _).collect();
    let arg_error = |e: HostError| match e {
        HostError::ArgumentType { kernel, index, param, given } => {
            format!("{} is {}, but parameter `{}` of `{}` is {}", argument(index - 1), given, param.name, kernel, param.type_name())
        }
        e => e.to_string(),
    };
    kernel.check_args(&args).map_err(arg_error)?;
    for o in a.outs {
        if !buffers.iter().any(|b| &b.name == o) {
            return Err(format!("--out {}: no buffer argument of that name", o));
        }
    }
    let cfg = LaunchConfig {
        grid: dims(a.grid, "grid", MAX_GRID)?,
        block: dims(a.block, "block", MAX_BLOCK)?,
        step_limit: a.step_limit.or(LaunchConfig::default().step_limit),
        strict: a.strict,
        trace: a.trace,
        memory_limit: a.memory_limit.or(LaunchConfig::default().memory_limit),
        shared_size: a.shared,
        profile: a.profile,
        timeline: a.timeline.is_some(),
        machine: machine_desc(a.timing, a.machine)?.map(std::sync::Arc::new),
        ..Default::default()
    };
    // A trap of a profiled launch still gives the profile and the timeline
    // of what ran before it; then the trap is the error.
    let (launch, trap) = match kernel.launch_with(&cfg, &args) {
        Ok(launch) => (launch, None),
        Err(HostError::Trap { trap, before: Some(before) }) => {
            let e = HostError::Trap { trap, before: None }.to_string();
            (*before, Some(e))
        }
        Err(e) => return Err(arg_error(e)),
    };
    if trap.is_none() {
        for b in buffers.iter().filter(|b| a.outs.contains(&b.name)) {
            let data = b.data.to_vec().map_err(|e| e.to_string())?;
            let vals: Vec<String> = data.chunks_exact(b.elem.size()).map(|c| b.elem.show(c)).collect();
            println!("{} = [{}]", b.name, vals.join(", "));
        }
    }
    if let Some(path) = a.timeline {
        let io = |e: std::io::Error| format!("--timeline {}: {}", path.display(), e);
        let mut out = std::io::BufWriter::new(std::fs::File::create(path).map_err(io)?);
        launch.write_timeline(&mut out).map_err(io)?;
        std::io::Write::flush(&mut out).map_err(io)?;
    }
    if let (true, Some(report)) = (a.profile, launch.profile_report()) {
        print!("{}", report);
    }
    if let Some(t) = trap {
        return Err(t);
    }
    if a.stats {
        let stats = launch.stats();
        let eff = if stats.instructions == 0 { 0.0 } else { 100.0 * stats.lane_instructions as f64 / (32.0 * stats.instructions as f64) };
        println!("launch:              {} CTAs, {} warps", stats.ctas, stats.warps);
        println!("instructions issued: {}", stats.instructions);
        println!("lane-instructions:   {}", stats.lane_instructions);
        println!("SIMT efficiency:     {:.1}% (lane-instructions / (32 x instructions issued))", eff);
        println!("cycles:              {}", stats.cycles);
        if let Some(sm) = &stats.sm {
            print!("{}", sm.report());
        }
        println!("per opcode:");
        for (op, n) in &stats.per_opcode {
            println!("  {:<10} {}", op, n);
        }
    }
    Ok(())
}
