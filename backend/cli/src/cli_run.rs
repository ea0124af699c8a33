//! `ursa run`: launch a kernel of an object on the simulator.
//!
//! Arguments, in parameter order:
//! - scalars `TYPE:VALUE` (`u32:7`, `i64:-1`, `f32:1.5`),
//! - buffers `buf:NAME=TYPE[N]` (N zeroed elements), `buf:NAME=TYPE:v1,v2,…`
//!   (inline values) or `buf:NAME=file:PATH` (raw bytes), passed as pointers.
//!
//! `--out NAME` prints a buffer after the run, as values of its type.
//!
//! A buffer holds at most [`MAX_BUFFER_BYTES`]; a larger size (or a file that
//! goes on past it, such as `/dev/zero`) is refused before anything is
//! allocated or read past the limit.

use std::io::Read;
use std::path::Path;

use ursa_sim::{Arg, Gpu, LaunchConfig, Program};

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
            "f32" => Elem::F32,
            "f64" => Elem::F64,
            _ => return None,
        })
    }
    fn size(self) -> usize {
        match self {
            Elem::U8 | Elem::I8 => 1,
            Elem::U16 | Elem::I16 => 2,
            Elem::U32 | Elem::I32 | Elem::F32 => 4,
            Elem::U64 | Elem::I64 | Elem::F64 => 8,
        }
    }
    /// Little-endian bytes of one value written in text.
    fn encode(self, v: &str) -> Option<Vec<u8>> {
        let int = |s: &str| -> Option<i128> { ursa_emit::text::parse_int(s) };
        let fits = |x: i128, lo: i128, hi: i128| (lo..=hi).contains(&x).then_some(x);
        Some(match self {
            Elem::U8 | Elem::I8 => vec![fits(int(v)?, -128, 255)? as u8],
            Elem::U16 | Elem::I16 => (fits(int(v)?, -32768, 65535)? as u16).to_le_bytes().to_vec(),
            Elem::U32 | Elem::I32 => (fits(int(v)?, i32::MIN as i128, u32::MAX as i128)? as u32).to_le_bytes().to_vec(),
            Elem::U64 | Elem::I64 => (fits(int(v)?, i64::MIN as i128, u64::MAX as i128)? as u64).to_le_bytes().to_vec(),
            Elem::F32 => v.parse::<f32>().ok()?.to_le_bytes().to_vec(),
            Elem::F64 => v.parse::<f64>().ok()?.to_le_bytes().to_vec(),
        })
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
            Elem::F32 => format!("{:?}", f32::from_le_bytes(b[..4].try_into().unwrap())),
            Elem::F64 => format!("{:?}", f64::from_le_bytes(b[..8].try_into().unwrap())),
        }
    }
}

/// The largest buffer argument, in bytes (256 MiB).
pub const MAX_BUFFER_BYTES: u64 = 256 << 20;

/// Reads at most [`MAX_BUFFER_BYTES`] of a file; a longer file is an error.
fn read_bounded(path: &str) -> Result<Vec<u8>, String> {
    let f = std::fs::File::open(path).map_err(|e| format!("{}: {}", path, e))?;
    let mut data = Vec::new();
    f.take(MAX_BUFFER_BYTES + 1).read_to_end(&mut data).map_err(|e| format!("{}: {}", path, e))?;
    if data.len() as u64 > MAX_BUFFER_BYTES {
        return Err(format!("{}: longer than the buffer limit of {} bytes (256 MiB)", path, MAX_BUFFER_BYTES));
    }
    Ok(data)
}

/// Bytes of `n` elements of `elem`, if within [`MAX_BUFFER_BYTES`].
fn buffer_bytes(n: &str, elem: Elem) -> Result<usize, String> {
    let count: u64 = n.trim().parse().map_err(|_| format!("`{}` is not an element count", n))?;
    match count.checked_mul(elem.size() as u64) {
        Some(b) if b <= MAX_BUFFER_BYTES => Ok(b as usize),
        _ => Err(format!("{} elements of {:?} exceed the buffer limit of {} bytes (256 MiB)", count, elem, MAX_BUFFER_BYTES)),
    }
}

struct Buffer {
    name: String,
    elem: Elem,
    addr: u64,
    len: usize,
}

pub struct RunArgs<'a> {
    pub input: &'a Path,
    pub kernel: &'a str,
    pub grid: &'a str,
    pub block: &'a str,
    pub args: &'a [String],
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
}

fn dims(s: &str, what: &str) -> Result<[u32; 3], String> {
    let parts: Vec<&str> = s.split(',').collect();
    if parts.is_empty() || parts.len() > 3 {
        return Err(format!("--{} takes X[,Y[,Z]], found `{}`", what, s));
    }
    let mut d = [1u32; 3];
    for (i, p) in parts.iter().enumerate() {
        d[i] = p.trim().parse::<u32>().ok().filter(|v| *v > 0).ok_or_else(|| format!("--{}: `{}` is not a positive integer", what, p))?;
    }
    Ok(d)
}

pub fn run(a: RunArgs) -> Result<(), String> {
    let bytes = std::fs::read(a.input).map_err(|e| format!("{}: {}", a.input.display(), e))?;
    let program = Program::load(&bytes).map_err(|e| format!("{}: {}", a.input.display(), e))?;
    // With a `.param` table (assembled with `.param`, or `compile --kernel`),
    // the arguments must match it in number and size.
    if let Some(f) = program.function(a.kernel).filter(|f| f.kernel && !f.params.is_empty()) {
        if a.args.len() != f.params.len() {
            let names: Vec<String> = f.params.iter().map(|p| format!("{} ({} bytes)", p.name, p.size)).collect();
            return Err(format!("kernel `{}` takes {} arguments ({}), {} given", a.kernel, f.params.len(), names.join(", "), a.args.len()));
        }
        for (i, (spec, p)) in a.args.iter().zip(&f.params).enumerate() {
            let size = if spec.starts_with("buf:") {
                8
            } else {
                match spec.split_once(':').and_then(|(ty, _)| Elem::parse(ty)) {
                    Some(e) => e.size(),
                    None => continue, // reported below
                }
            };
            if size != p.size as usize {
                return Err(format!(
                    "argument {} (`{}`) is {} bytes, but parameter `{}` of `{}` is {} bytes",
                    i + 1,
                    spec,
                    size,
                    p.name,
                    a.kernel,
                    p.size
                ));
            }
        }
    }
    let mut gpu = Gpu::new();
    let mut buffers: Vec<Buffer> = Vec::new();
    let mut kargs = Vec::new();
    for (i, spec) in a.args.iter().enumerate() {
        let bad = |m: &str| format!("argument {} (`{}`): {}", i + 1, spec, m);
        if let Some(b) = spec.strip_prefix("buf:") {
            let (name, def) =
                b.split_once('=').ok_or_else(|| bad("expected buf:NAME=TYPE[N], buf:NAME=TYPE:v1,v2 or buf:NAME=file:PATH"))?;
            let (elem, data) = if let Some(path) = def.strip_prefix("file:") {
                (Elem::U8, read_bounded(path).map_err(|e| bad(&e))?)
            } else if let Some((ty, rest)) = def.split_once('[') {
                let elem = Elem::parse(ty).ok_or_else(|| bad(&format!("unknown element type `{}`", ty)))?;
                let n = rest.strip_suffix(']').ok_or_else(|| bad("expected TYPE[N]"))?;
                (elem, vec![0u8; buffer_bytes(n, elem).map_err(|e| bad(&e))?])
            } else if let Some((ty, vals)) = def.split_once(':') {
                let elem = Elem::parse(ty).ok_or_else(|| bad(&format!("unknown element type `{}`", ty)))?;
                let mut d = Vec::new();
                for v in vals.split(',') {
                    d.extend(elem.encode(v.trim()).ok_or_else(|| bad(&format!("`{}` is not a {:?} value", v, elem)))?);
                    if d.len() as u64 > MAX_BUFFER_BYTES {
                        return Err(bad(&format!("more values than the buffer limit of {} bytes", MAX_BUFFER_BYTES)));
                    }
                }
                (elem, d)
            } else {
                return Err(bad("expected buf:NAME=TYPE[N], buf:NAME=TYPE:v1,v2 or buf:NAME=file:PATH"));
            };
            let addr = gpu.alloc(data.len().max(1) as u64, 16);
            gpu.write(addr, &data).map_err(|t| bad(&t.to_string()))?;
            buffers.push(Buffer { name: name.to_string(), elem, addr, len: data.len() });
            kargs.push(Arg::Ptr(addr));
        } else {
            let (ty, v) = spec.split_once(':').ok_or_else(|| bad("expected TYPE:VALUE or buf:…"))?;
            let elem = Elem::parse(ty).ok_or_else(|| bad(&format!("unknown type `{}`", ty)))?;
            let b = elem.encode(v).ok_or_else(|| bad(&format!("`{}` is not a {:?} value", v, elem)))?;
            kargs.push(match elem {
                Elem::F32 => Arg::F32(f32::from_le_bytes(b[..4].try_into().unwrap())),
                Elem::F64 => Arg::F64(f64::from_le_bytes(b[..8].try_into().unwrap())),
                Elem::U64 | Elem::I64 => Arg::U64(u64::from_le_bytes(b[..8].try_into().unwrap())),
                Elem::U32 | Elem::I32 => Arg::U32(u32::from_le_bytes(b[..4].try_into().unwrap())),
                _ => Arg::Bytes(b),
            });
        }
    }
    for o in a.outs {
        if !buffers.iter().any(|b| &b.name == o) {
            return Err(format!("--out {}: no buffer argument of that name", o));
        }
    }
    let cfg = LaunchConfig {
        grid: dims(a.grid, "grid")?,
        block: dims(a.block, "block")?,
        step_limit: a.step_limit.or(LaunchConfig::default().step_limit),
        strict: a.strict,
        trace: a.trace,
        memory_limit: a.memory_limit.or(LaunchConfig::default().memory_limit),
        shared_size: a.shared,
        profile: a.profile,
        timeline: a.timeline.is_some(),
        ..Default::default()
    };
    let stats = gpu.launch(&program, a.kernel, &cfg, &kargs).map_err(|t| match t.kind {
        ursa_sim::TrapKind::Launch(_) => t.to_string(),
        _ => format!("trap: {}", t),
    })?;
    for b in buffers.iter().filter(|b| a.outs.contains(&b.name)) {
        let data = gpu.read(b.addr, b.len as u64).map_err(|t| t.to_string())?;
        let vals: Vec<String> = data.chunks(b.elem.size()).filter(|c| c.len() == b.elem.size()).map(|c| b.elem.show(c)).collect();
        println!("{} = [{}]", b.name, vals.join(", "));
    }
    if let (Some(path), Some(p)) = (a.timeline, &stats.profile) {
        let json = serde_json::to_string(&p.chrome_trace(&program, cfg.grid)).map_err(|e| format!("--timeline: {}", e))?;
        std::fs::write(path, json).map_err(|e| format!("--timeline {}: {}", path.display(), e))?;
    }
    if let (true, Some(p)) = (a.profile, &stats.profile) {
        print!("{}", p.report(&program, &stats));
    }
    if a.stats {
        let eff = if stats.instructions == 0 { 0.0 } else { 100.0 * stats.lane_instructions as f64 / (32.0 * stats.instructions as f64) };
        println!("launch:              {} CTAs, {} warps", stats.ctas, stats.warps);
        println!("instructions issued: {}", stats.instructions);
        println!("lane-instructions:   {}", stats.lane_instructions);
        println!("SIMT efficiency:     {:.1}% (lane-instructions / (32 x instructions issued))", eff);
        println!("cycles:              {}", stats.cycles);
        println!("per opcode:");
        for (op, n) in &stats.per_opcode {
            println!("  {:<10} {}", op, n);
        }
    }
    Ok(())
}
