//! Loading: an ELF object is parsed with `ursa_emit::elf::read`, its
//! functions are laid out one after another in a code space, relocations are
//! applied, and every instruction is decoded once into an [`Exec`].
//! Bytes that do not decode become an `Invalid` op that traps only if executed.

use ursa_emit::elf::{self, Function};
use ursa_emit::tables::Kind;
use ursa_emit::{control, Inst, RegRef, RegSlot, INST_BYTES};

use crate::decode::{decode_op, Fields};
use crate::decode_ext::decode_ext;
use crate::jit::cache::{Cache, JitStats};
use crate::ops::{Op, PIn};
use crate::timing::{class_of_form, Ctrl, DynReg, File, RegUse, SCOREBOARDS};
use crate::trap::LoadError;

/// Code address of the first instruction of the first function.
pub const CODE_BASE: u64 = 0x10_0000;

/// Code address a device-function call returns to; reaching it ends the thread.
pub const RETURN_SENTINEL: u64 = 0xFFFF_FFFF_FFFF_FFF0;

/// One pre-decoded instruction.
#[derive(Clone, Debug)]
pub(crate) struct Exec {
    pub op: Op,
    pub guard: PIn,
    /// Executes once per warp (uniform datapath: UDP group and S2UR).
    pub uniform: bool,
    pub ctrl: Ctrl,
    pub lat: u16,
    pub variable: bool,
    /// Index of the opcode form in `ursa_emit::ISA.forms` (for statistics;
    /// `u16::MAX` for bytes that match no form).
    pub form: u16,
}

/// A function of the program.
#[derive(Clone, Debug)]
pub struct FunctionInfo {
    pub name: String,
    pub kernel: bool,
    /// Code address of the first instruction.
    pub address: u64,
    pub size: u64,
    pub params: Vec<elf::Param>,
    pub shared_size: u32,
    pub local_size: u32,
    /// R registers per thread: the object's record, or counted in the code
    /// where the object has none (a version-1 object).
    pub registers: u32,
    /// The source line of each instruction (the object's `.ursa.lines`;
    /// empty if it has none).
    pub lines: elf::LineTable,
}

/// A loaded program: the code space of all functions of one object.
pub struct Program {
    pub(crate) code: Vec<Exec>,
    pub(crate) raw: Vec<[u8; INST_BYTES]>,
    /// Decoder or simulator message for instructions that are `Op::Invalid`.
    pub(crate) errors: Vec<Option<String>>,
    pub(crate) uses: Vec<RegUse>,
    pub functions: Vec<FunctionInfo>,
    /// The object's data objects (placed in memory by
    /// `host::Device::load_module`, which also applies their relocations).
    pub data: Vec<elf::DataObject>,
    /// The address table (constant bank 14): the data object of each entry.
    pub addresses: Vec<String>,
    /// Translations to host code, made once their entry is hot (jit/).
    pub(crate) jit: Cache,
}

impl Program {
    /// How many GPR rows (from R0) the program's instructions can read or
    /// write: one past the highest R register any instruction names (a
    /// tuple's every register), all rows when one accesses a register it
    /// computes (SETGPR/GETGPR). The rows above keep a fresh register
    /// file's zeros through any run of the program.
    pub(crate) fn gpr_rows_named(&self) -> usize {
        let mut rows = 0;
        for u in &self.uses {
            if u.dynamic.is_some_and(|d| d.file == File::R) {
                return crate::regs::GPR_ROWS;
            }
            for &(file, n) in u.reads.iter().chain(&u.writes) {
                if file == File::R {
                    rows = rows.max(n as usize + 1);
                }
            }
        }
        rows
    }

    /// Parses, lays out, relocates and pre-decodes an ELF object.
    pub fn load(elf_bytes: &[u8]) -> Result<Program, LoadError> {
        let obj = elf::read(elf_bytes).map_err(|e| LoadError::Elf(e.to_string()))?;
        let mut prog = Program::from_functions(&obj.functions)?;
        for d in &obj.data {
            for r in &d.relocs {
                let known = prog.function(&r.symbol).is_some() || obj.data.iter().any(|o| o.name == r.symbol);
                if !known {
                    return Err(LoadError::UndefinedSymbol { function: d.name.clone(), symbol: r.symbol.clone() });
                }
                if r.offset.checked_add(8).is_none_or(|end| end > u64::from(d.size)) {
                    return Err(LoadError::BadRelocation { function: d.name.clone(), offset: r.offset });
                }
            }
        }
        prog.data = obj.data;
        prog.addresses = obj.addresses;
        Ok(prog)
    }

    /// Builds a program from already-parsed functions (what `load` does after
    /// reading the ELF).
    pub fn from_functions(funcs: &[Function]) -> Result<Program, LoadError> {
        let mut infos = Vec::new();
        let mut addr = CODE_BASE;
        for f in funcs {
            if f.code.len() % INST_BYTES != 0 {
                return Err(LoadError::BadCodeSize { function: f.name.clone(), size: f.code.len() });
            }
            if infos.iter().any(|i: &FunctionInfo| i.name == f.name) {
                return Err(LoadError::DuplicateFunction(f.name.clone()));
            }
            infos.push(FunctionInfo {
                name: f.name.clone(),
                kernel: f.kernel,
                address: addr,
                size: f.code.len() as u64,
                params: f.params.clone(),
                shared_size: f.shared_size,
                local_size: f.local_size,
                registers: if f.registers != 0 { f.registers } else { elf::registers_in_code(&f.code) },
                lines: f.lines.clone(),
            });
            addr += f.code.len() as u64;
        }
        let mut bytes: Vec<u8> = Vec::with_capacity((addr - CODE_BASE) as usize);
        for (f, info) in funcs.iter().zip(&infos) {
            let mut code = f.code.clone();
            for r in &f.relocs {
                let s = infos
                    .iter()
                    .find(|i| i.name == r.symbol)
                    .ok_or_else(|| LoadError::UndefinedSymbol { function: f.name.clone(), symbol: r.symbol.clone() })?
                    .address;
                if r.offset + 4 > code.len() as u64 {
                    return Err(LoadError::BadRelocation { function: f.name.clone(), offset: r.offset });
                }
                let p = info.address + r.offset;
                let v = (s as i64).wrapping_add(r.addend).wrapping_sub(p as i64) as u32;
                code[r.offset as usize..r.offset as usize + 4].copy_from_slice(&v.to_le_bytes());
            }
            bytes.extend_from_slice(&code);
        }
        let n = bytes.len() / INST_BYTES;
        let mut prog = Program {
            code: Vec::with_capacity(n),
            raw: Vec::with_capacity(n),
            errors: Vec::with_capacity(n),
            uses: Vec::with_capacity(n),
            functions: infos,
            data: Vec::new(),
            addresses: Vec::new(),
            jit: Default::default(),
        };
        for i in 0..n {
            let raw: [u8; INST_BYTES] = bytes[i * INST_BYTES..(i + 1) * INST_BYTES].try_into().unwrap();
            let pc = CODE_BASE + (i * INST_BYTES) as u64;
            let (exec, err, uses) = match Inst::decode(&raw) {
                Ok(inst) => predecode(&inst, pc),
                Err(e) => (undecodable(&raw), Some(e.to_string()), RegUse::default()),
            };
            prog.code.push(exec);
            prog.raw.push(raw);
            prog.errors.push(err);
            prog.uses.push(uses);
        }
        Ok(prog)
    }

    /// The function with this name.
    pub fn function(&self, name: &str) -> Option<&FunctionInfo> {
        self.functions.iter().find(|f| f.name == name)
    }

    /// The function containing a code address, and the offset in it.
    pub fn locate(&self, pc: u64) -> Option<(&FunctionInfo, u64)> {
        self.functions.iter().find(|f| pc >= f.address && pc < f.address + f.size).map(|f| (f, pc - f.address))
    }

    /// The source line of the instruction at `pc` (`file:line`), if its
    /// function has a line table.
    pub fn source_line(&self, pc: u64) -> Option<String> {
        let (f, off) = self.locate(pc)?;
        f.lines.location_at(off)
    }

    /// Index of the instruction at `pc`, if `pc` is a valid code address.
    #[inline(always)]
    pub(crate) fn index(&self, pc: u64) -> Option<usize> {
        let off = pc.wrapping_sub(CODE_BASE);
        if !off.is_multiple_of(INST_BYTES as u64) {
            return None;
        }
        let i = (off / INST_BYTES as u64) as usize;
        (i < self.code.len()).then_some(i)
    }

    /// The canonical text of the instruction at `pc` (or why it has none).
    pub fn disassemble_at(&self, pc: u64) -> Option<String> {
        let i = self.index(pc)?;
        Some(match Inst::decode(&self.raw[i]) {
            Ok(inst) => ursa_emit::format_inst(&inst, Some(pc), &ursa_emit::NoLabels).unwrap_or_else(|e| e.to_string()),
            Err(e) => format!("<undecodable: {}> {}", e, hex(&self.raw[i])),
        })
    }

    /// What the translator to host code has done for this program so far.
    pub fn jit_stats(&self) -> JitStats {
        self.jit.stats()
    }

    /// Number of instructions in the code space.
    pub fn len(&self) -> usize {
        self.code.len()
    }

    pub fn is_empty(&self) -> bool {
        self.code.is_empty()
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().rev().map(|x| format!("{:02x}", x)).collect()
}

fn invalid() -> Exec {
    Exec { op: Op::Invalid, guard: PIn::TRUE, uniform: false, ctrl: Ctrl::default(), lat: 1, variable: false, form: u16::MAX }
}

/// Bytes the decoder rejects. UF2FP has an encoding but no syntax or
/// semantics (E74): the decoder rejects it, and executing it is the trap
/// "semantics not defined" rather than "undecodable".
fn undecodable(raw: &[u8; INST_BYTES]) -> Exec {
    let isa = &ursa_emit::ISA;
    let uf2fp = &isa.optypes[ursa_emit::optypes::UF2FP::ID as usize];
    if uf2fp.value != raw[0] {
        return invalid();
    }
    // The form whose fixed bits the word matches (UF2FP_UUU or UF2FP_UCU).
    let word = u128::from_le_bytes(*raw);
    let form = uf2fp.forms.iter().copied().find(|&f| word & isa.forms[f as usize].fixed_mask == isa.forms[f as usize].fixed_bits);
    Exec { op: Op::Undefined("UF2FP"), form: form.unwrap_or(uf2fp.forms[0]), ..invalid() }
}

/// Decodes one valid instruction into its executable form.
fn predecode(inst: &Inst, pc: u64) -> (Exec, Option<String>, RegUse) {
    let def = inst.def();
    let optype = &ursa_emit::ISA.optypes[def.optype as usize];
    let f = Fields::new(inst);
    // The scheduling control is the same fields in every form (group `ALL`).
    let ctrl = Ctrl {
        stall: inst.get(control::STALL) as u8,
        yield_: inst.get(control::YIELD) != 0,
        wsb: inst.get(control::WSB) as u8,
        req: inst.get(control::REQ) as u8,
    };
    let uniform = inst.form().uniform();
    let guard = if let Some(g) = def.guard {
        let gf = &def.fields[g as usize];
        let not = def.guard_not.is_some_and(|n| inst.get_at(n as usize) != 0);
        PIn { uniform: gf.kind == Kind::UPred, idx: inst.get_at(g as usize) as u8, not }
    } else {
        PIn::TRUE
    };
    let decoded = match decode_op(&f, def.optype) {
        Ok(None) => decode_ext(&f, def.optype, pc),
        d => d,
    };
    let decoded = decoded.and_then(|op| op.ok_or_else(|| format!("the simulator does not implement {}", optype.name)));
    let (op, err) = match decoded {
        Ok(op) => (op, None),
        Err(e) => (Op::Invalid, Some(e)),
    };
    let class = class_of_form(inst.form());
    // MEMBAR holds the warp until its earlier memory operations, load
    // write-backs included, have completed: it waits on every scoreboard.
    let ctrl = if matches!(op, Op::Membar) { Ctrl { req: (1 << SCOREBOARDS) - 1, ..ctrl } } else { ctrl };
    let mut uses = reg_use(inst);
    uses.dynamic = dynamic_reg(&op);
    let exec = Exec { op, guard, uniform, ctrl, lat: class.latency(), variable: class.variable(), form: inst.form().0 };
    (exec, err, uses)
}

/// The register SETGPR/GETGPR/SETUGPR/GETUGPR access through a uniform
/// index register (resolved at issue time in strict mode).
fn dynamic_reg(op: &Op) -> Option<DynReg> {
    let (file, base, offset, write) = match *op {
        Op::Setgpr { idx, off, .. } => (File::R, idx, off, true),
        Op::Getgpr { idx, off, .. } => (File::R, idx, off, false),
        Op::Setugpr { idx, off, .. } => (File::UR, idx, off, true),
        Op::Getugpr { idx, off, .. } => (File::UR, idx, off, false),
        _ => return None,
    };
    Some(DynReg { file, base, offset, write })
}

/// The registers an instruction reads and writes: `Inst::reg_reads` /
/// `reg_writes` of the instruction decoded from the bytes.
fn reg_use(inst: &Inst) -> RegUse {
    let mut u = RegUse::default();
    // One register at a time; a tuple never runs into the zero register.
    let split = |r: &RegRef| {
        let (file, zero) = (r.file, r.file.zero());
        r.regs().filter(move |&n| n < zero).map(move |n| (file, n as u16))
    };
    let reads = inst.reg_reads();
    // The guard is reported once as an operand of the InList and once more
    // as the guard; it is checked once.
    let guard = inst.def().guard.map(RegSlot::Field);
    let guard_listed = |r: &RegRef| r.slot == RegSlot::Guard && reads.iter().any(|x| Some(x.slot) == guard);
    u.reads = reads.iter().filter(|r| !guard_listed(r)).flat_map(split).collect();
    u.writes = inst.reg_writes().iter().flat_map(split).collect();
    u
}

#[cfg(test)]
mod tests {
    use super::*;
    use ursa_emit::{parse_inst, NoLabels};

    fn uses(text: &str) -> RegUse {
        reg_use(&parse_inst(text, 0, None, &NoLabels).unwrap())
    }

    #[test]
    fn registers_come_from_the_decoded_instruction() {
        // The guard once, sources in InList order, the zero registers never.
        let u = uses("@!P2 IADD R4, P1, R2, RZ ;");
        assert_eq!(u.reads, [(File::P, 2), (File::R, 2)]);
        assert_eq!(u.writes, [(File::R, 4), (File::P, 1)]);
        // A 64-bit operand is a pair, split register by register.
        let u = uses("LDG.64 R[10:11], [R[6:7]+0x8] &wsb=0 ;");
        assert_eq!(u.reads, [(File::R, 6), (File::R, 7)]);
        assert_eq!(u.writes, [(File::R, 10), (File::R, 11)]);
        assert!(u.dynamic.is_none());
    }
}
