//! The binary format: a relocatable ELF64 object, little-endian, with one
//! `.text.NAME` section per function, a global function symbol per entry
//! point, `.rela.text.NAME` relocations for calls between sections, and the
//! `.ursa.info` section with each function's kind, parameter layout and
//! memory sizes, and (when the compiler had source locations) the
//! `.ursa.lines` section with each function's line table.
//! `docs/binary-format.md` describes it byte by byte.

use std::fmt;

use object::elf;
use object::read::elf::{ElfFile64, FileHeader};
use object::read::{Object as _, ObjectSection as _, ObjectSymbol as _};
use object::write::elf::{FileHeader as WFileHeader, Rel, SectionHeader, Sym, Writer};
use object::{Endianness, RelocationFlags, RelocationTarget};

/// `e_machine` of Ursa objects ("UR", not assigned by any registry).
pub const EM_URSA: u16 = 0x5552;
/// Relocation: 32-bit little-endian `S + A - P` at `r_offset`.
pub const R_URSA_REL32: u32 = 1;
/// Relocation: 64-bit little-endian `S + A` (an absolute address) at
/// `r_offset` of a data section.
pub const R_URSA_ABS64: u32 = 2;
/// The section of the zero-initialized writable data objects (`SHT_NOBITS`).
pub const GLOBAL_SECTION: &str = ".ursa.global";
/// The section of the initialized writable data objects.
pub const GLOBAL_INIT_SECTION: &str = ".ursa.global.init";
/// The section of the read-only data objects: the contents of constant bank
/// [`CONSTANT_BANK`].
pub const CONSTANT_SECTION: &str = ".ursa.constant3";
/// The section of the address table: constant bank [`ADDRESS_BANK`], one
/// 64-bit address per data object, filled by `R_URSA_ABS64` relocations.
pub const ADDRESS_SECTION: &str = ".ursa.constant14";
/// The constant bank of the read-only data objects (CUDA's `__constant__`
/// variables are in bank 3 of a cubin too).
pub const CONSTANT_BANK: u8 = 3;
/// The constant bank of the address table (old cubins kept the addresses of
/// `__device__` variables in bank 14 likewise).
pub const ADDRESS_BANK: u8 = 14;
/// Bytes of a constant bank: the most [`CONSTANT_SECTION`] and
/// [`ADDRESS_SECTION`] may hold (CUDA's 64 KiB of `__constant__` data).
pub const BANK_BYTES: u32 = 0x10000;
/// Name of the metadata section.
pub const INFO_SECTION: &str = ".ursa.info";
const INFO_MAGIC: &[u8; 4] = b"URSA";
/// Version 2 added each function's register count, version 3 each
/// parameter's kind; older objects still load (their register count reads
/// as 0, not recorded, their parameters as [`ParamKind::Bytes`]).
const INFO_VERSION: u32 = 3;

/// Name of the line-table section (optional).
pub const LINES_SECTION: &str = ".ursa.lines";
const LINES_MAGIC: &[u8; 4] = b"URLN";
const LINES_VERSION: u32 = 1;

/// Bytes the kernel parameter block can hold: constant bank 0 is at most
/// 64 KiB and the block starts at 0x160 (`docs/abi.md`).
pub const PARAM_BYTES: u32 = 0x10000 - 0x160;

/// Why a kernel parameter cannot be in the parameter block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamError {
    /// A parameter of 0 bytes.
    Empty,
    /// Its end is past [`PARAM_BYTES`].
    PastBank { offset: u32, size: u32 },
}

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            ParamError::Empty => write!(f, "a parameter of 0 bytes"),
            ParamError::PastBank { offset, size } => write!(
                f,
                "a parameter of {} bytes at offset {} ends past the {} bytes constant bank 0 has for parameters",
                size, offset, PARAM_BYTES
            ),
        }
    }
}

impl std::error::Error for ParamError {}

/// Why a parameter of `size` bytes at `offset` cannot be in the block, if it
/// cannot (its end is past [`PARAM_BYTES`], or it is empty).
pub fn param_room(offset: u32, size: u32) -> Result<(), ParamError> {
    if size == 0 {
        return Err(ParamError::Empty);
    }
    match offset.checked_add(size) {
        Some(end) if end <= PARAM_BYTES => Ok(()),
        _ => Err(ParamError::PastBank { offset, size }),
    }
}

/// What a kernel parameter (or a launch argument) holds: with its size, its
/// type. Recorded in the object since `.ursa.info` version 3.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ParamKind {
    /// Bytes of no known type (`.param NAME, SIZE`, a CLIF vector, an object
    /// older than version 3): only the size is checked.
    #[default]
    Bytes,
    /// An integer of 1, 2, 4, 8 or 16 bytes (`i8` … `i128`; signless, as in CLIF).
    Int,
    /// A float of 4 or 8 bytes (`f32`, `f64`).
    Float,
    /// A global-memory address, 8 bytes (`ptr`).
    Ptr,
}

impl ParamKind {
    /// The kind's number in `.ursa.info`.
    fn code(self) -> u32 {
        match self {
            ParamKind::Bytes => 0,
            ParamKind::Int => 1,
            ParamKind::Float => 2,
            ParamKind::Ptr => 3,
        }
    }
    fn from_code(c: u32) -> Option<ParamKind> {
        [ParamKind::Bytes, ParamKind::Int, ParamKind::Float, ParamKind::Ptr].into_iter().find(|k| k.code() == c)
    }
    /// Whether a value of this kind can be `size` bytes.
    pub fn allows_size(self, size: u32) -> bool {
        match self {
            ParamKind::Bytes => size > 0,
            ParamKind::Int => matches!(size, 1 | 2 | 4 | 8 | 16),
            ParamKind::Float => matches!(size, 4 | 8),
            ParamKind::Ptr => size == 8,
        }
    }
    /// The type written for a value of this kind and `size` bytes, as
    /// `.param` and `ursa run` spell it (`i32`, `f64`, `ptr`, `12 bytes`).
    pub fn type_name(self, size: u32) -> String {
        match self {
            ParamKind::Bytes => format!("{} bytes", size),
            ParamKind::Int => format!("i{}", size * 8),
            ParamKind::Float => format!("f{}", size * 8),
            ParamKind::Ptr => "ptr".into(),
        }
    }
    /// The kind and size a type name gives (`i8` … `i128`, `f32`, `f64`, `ptr`).
    pub fn parse_type(s: &str) -> Option<(ParamKind, u32)> {
        Some(match s {
            "i8" => (ParamKind::Int, 1),
            "i16" => (ParamKind::Int, 2),
            "i32" => (ParamKind::Int, 4),
            "i64" => (ParamKind::Int, 8),
            "i128" => (ParamKind::Int, 16),
            "f32" => (ParamKind::Float, 4),
            "f64" => (ParamKind::Float, 8),
            "ptr" => (ParamKind::Ptr, 8),
            _ => return None,
        })
    }
}

/// A kernel parameter: its byte offset in the parameter block (constant bank
/// 0 from 0x160), its size and what it holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Param {
    pub name: String,
    pub offset: u32,
    pub size: u32,
    pub kind: ParamKind,
}

impl Param {
    /// The parameter's type as `.param` writes it (`i32`, `ptr`, `8 bytes`).
    pub fn type_name(&self) -> String {
        self.kind.type_name(self.size)
    }
    /// Whether an argument of `kind` and `size` bytes may be passed for this
    /// parameter: the sizes must be equal, and the kinds too unless either is
    /// [`ParamKind::Bytes`]; an 8-byte integer and a pointer stand for each
    /// other (CLIF has no pointer type: a compiled kernel's pointer
    /// parameters are `i64`, and an address may be given as a number).
    pub fn accepts(&self, kind: ParamKind, size: u32) -> bool {
        let pointer_sized_int = |k: ParamKind| k == ParamKind::Int && size == 8;
        size == self.size
            && (kind == self.kind
                || kind == ParamKind::Bytes
                || self.kind == ParamKind::Bytes
                || (kind == ParamKind::Ptr && pointer_sized_int(self.kind))
                || (self.kind == ParamKind::Ptr && pointer_sized_int(kind)))
    }
}

/// A relocation inside a function's code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reloc {
    /// Byte offset of the patched 32-bit value in the function's code.
    pub offset: u64,
    /// The function whose address `S` is used.
    pub symbol: String,
    pub addend: i64,
}

/// Where a function's instructions come from: a source file and, for each
/// run of instructions from one line, the byte offset of its first
/// instruction and the line (`.ursa.lines`). Empty when the compiler had no
/// source locations (an assembled function, CLIF built without them).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct LineTable {
    /// The source file as the compiler's caller named it (may be empty).
    pub file: String,
    /// Sorted by offset, the first at 0; a row holds until the next one.
    pub rows: Vec<LineRow>,
}

/// One row of a [`LineTable`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineRow {
    /// Byte offset of the first instruction of the run in the function's code.
    pub offset: u32,
    /// Its line in the source file (from 1).
    pub line: u32,
}

impl LineTable {
    /// The table of code whose `k`th instruction comes from line `lines[k]`:
    /// an instruction of no line of its own (a register copy, a prologue, a
    /// branch the layout added) counts as its predecessor's line, those
    /// before the first line as the first line. Empty when no instruction
    /// has a line.
    pub fn from_lines(file: &str, lines: impl IntoIterator<Item = Option<u32>>) -> LineTable {
        let mut rows: Vec<LineRow> = Vec::new();
        for (k, line) in lines.into_iter().enumerate() {
            let Some(line) = line else { continue };
            let offset = if rows.is_empty() { 0 } else { (k * crate::INST_BYTES) as u32 };
            if rows.last().is_none_or(|r| r.line != line) {
                rows.push(LineRow { offset, line });
            }
        }
        LineTable { file: if rows.is_empty() { String::new() } else { file.to_string() }, rows }
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The line of the instruction at byte `offset` of the function.
    pub fn line_at(&self, offset: u64) -> Option<u32> {
        let k = self.rows.partition_point(|r| u64::from(r.offset) <= offset);
        k.checked_sub(1).map(|k| self.rows[k].line)
    }

    /// `file:line` of the instruction at byte `offset` (`line N` when the
    /// table names no file).
    pub fn location_at(&self, offset: u64) -> Option<String> {
        let line = self.line_at(offset)?;
        Some(if self.file.is_empty() { format!("line {}", line) } else { format!("{}:{}", self.file, line) })
    }
}

/// One function or kernel.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Function {
    pub name: String,
    /// Kernels can be launched; other functions are only called.
    pub kernel: bool,
    /// Instructions, 16 bytes each.
    pub code: Vec<u8>,
    pub params: Vec<Param>,
    pub relocs: Vec<Reloc>,
    /// Bytes of shared memory per CTA.
    pub shared_size: u32,
    /// Bytes of local memory (stack) per thread.
    pub local_size: u32,
    /// R registers per thread the function is allocated (as a cubin's
    /// `.nv.info` records; the launch's occupancy depends on it). 0: not
    /// recorded (a version-1 object); [`registers_in_code`] counts them.
    pub registers: u32,
    /// The source line of each instruction (`.ursa.lines`; empty if none).
    pub lines: LineTable,
}

/// The R registers a function's code uses: one more than the highest R
/// register any instruction reads or writes (tuples counted whole, RZ not
/// counted), 0 for code that names none. Bytes that do not decode are
/// skipped.
pub fn registers_in_code(code: &[u8]) -> u32 {
    let insts = code.chunks_exact(crate::INST_BYTES).filter_map(|c| crate::Inst::decode(c.try_into().expect("chunks of INST_BYTES")).ok());
    registers_of(insts)
}

/// The R registers the instructions `insts` use, counted as
/// [`registers_in_code`] counts them in encoded code.
pub fn registers_of<I: std::borrow::Borrow<crate::Inst>>(insts: impl IntoIterator<Item = I>) -> u32 {
    insts.into_iter().map(|i| i.borrow().r_regs_end()).max().unwrap_or(0).min(crate::RegFile::R.zero())
}

/// Where a data object lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum DataSpace {
    /// Writable global memory ([`GLOBAL_SECTION`] when zero-initialized,
    /// [`GLOBAL_INIT_SECTION`] otherwise): CUDA's `__device__`.
    #[default]
    Global,
    /// Read-only: constant bank [`CONSTANT_BANK`] ([`CONSTANT_SECTION`]),
    /// with a copy in global memory for its address: CUDA's `__constant__`.
    Constant,
}

/// A data object: a named piece of memory with initial contents, the
/// addresses written into it at load time, and its place in its section.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct DataObject {
    pub name: String,
    pub space: DataSpace,
    /// Byte offset in its section; for [`DataSpace::Constant`] its offset in
    /// constant bank [`CONSTANT_BANK`] ([`layout_data`] assigns it).
    pub offset: u32,
    pub size: u32,
    /// A power of two.
    pub align: u32,
    /// The initial contents (`size` bytes); `None` for zeros (only a
    /// [`DataSpace::Global`] object without relocations, in the `SHT_NOBITS`
    /// section [`GLOBAL_SECTION`]).
    pub init: Option<Vec<u8>>,
    /// `R_URSA_ABS64` relocations: `offset` in the object, the data object
    /// or function whose address `S` is written, `addend` `A`.
    pub relocs: Vec<Reloc>,
}

impl DataObject {
    /// The name of the section the object is in.
    pub fn section(&self) -> &'static str {
        match (self.space, &self.init) {
            (DataSpace::Constant, _) => CONSTANT_SECTION,
            (DataSpace::Global, None) => GLOBAL_SECTION,
            (DataSpace::Global, Some(_)) => GLOBAL_INIT_SECTION,
        }
    }
}

/// Places each data object of `data` at the next offset of its section
/// aligned to its alignment, in order; `Err` names the first object that
/// ends past its section's limit (64 KiB for the constant bank, 4 GiB for
/// global memory).
pub fn layout_data(data: &mut [DataObject]) -> Result<(), String> {
    let mut ends: Vec<(&'static str, u64)> = Vec::new();
    for d in data.iter_mut() {
        let sec = d.section();
        let end = match ends.iter_mut().find(|(s, _)| *s == sec) {
            Some((_, e)) => e,
            None => {
                ends.push((sec, 0));
                &mut ends.last_mut().unwrap().1
            }
        };
        let align = u64::from(d.align.max(1));
        let start = end.div_ceil(align) * align;
        let limit = if sec == CONSTANT_SECTION { u64::from(BANK_BYTES) } else { 1 << 32 };
        if start + u64::from(d.size) > limit {
            return Err(format!(
                "data object `{}` ({} bytes at offset {}) ends past the {} bytes of {}",
                d.name, d.size, start, limit, sec
            ));
        }
        d.offset = start as u32;
        *end = start + u64::from(d.size);
    }
    Ok(())
}

/// An object file: its functions, its data objects and the address table.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Object {
    pub functions: Vec<Function>,
    pub data: Vec<DataObject>,
    /// The address table ([`ADDRESS_SECTION`], constant bank
    /// [`ADDRESS_BANK`]): entry `k`, at byte `8 k`, is the address of the
    /// data object named here.
    pub addresses: Vec<String>,
}

impl Object {
    pub fn function(&self, name: &str) -> Option<&Function> {
        self.functions.iter().find(|f| f.name == name)
    }
}

/// Why bytes are not a valid Ursa object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ElfError(pub String);

impl fmt::Display for ElfError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid object: {}", self.0)
    }
}

impl std::error::Error for ElfError {}

fn bad<T>(msg: impl Into<String>) -> Result<T, ElfError> {
    Err(ElfError(msg.into()))
}

/// Appends `v`, little-endian.
fn put32(b: &mut Vec<u8>, v: u32) {
    b.extend_from_slice(&v.to_le_bytes());
}

/// Appends `s` as its byte length and its UTF-8 bytes.
fn put_str(b: &mut Vec<u8>, s: &str) {
    put32(b, s.len() as u32);
    b.extend_from_slice(s.as_bytes());
}

/// The `.ursa.info` bytes of `obj` in format `version` (the current one; the
/// tests write older ones, without the fields added since).
fn info_bytes(obj: &Object, version: u32) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(INFO_MAGIC);
    put32(&mut b, version);
    put32(&mut b, obj.functions.len() as u32);
    for f in &obj.functions {
        put_str(&mut b, &f.name);
        put32(&mut b, f.kernel as u32);
        put32(&mut b, f.shared_size);
        put32(&mut b, f.local_size);
        if version >= 2 {
            put32(&mut b, f.registers);
        }
        put32(&mut b, f.params.len() as u32);
        for p in &f.params {
            put_str(&mut b, &p.name);
            put32(&mut b, p.offset);
            put32(&mut b, p.size);
            if version >= 3 {
                put32(&mut b, p.kind.code());
            }
        }
    }
    b
}

/// The `.ursa.lines` bytes of `obj`: the line tables of the functions that
/// have one; `None` when none has.
fn lines_bytes(obj: &Object) -> Option<Vec<u8>> {
    let with: Vec<&Function> = obj.functions.iter().filter(|f| !f.lines.is_empty()).collect();
    if with.is_empty() {
        return None;
    }
    let mut b = Vec::new();
    b.extend_from_slice(LINES_MAGIC);
    put32(&mut b, LINES_VERSION);
    put32(&mut b, with.len() as u32);
    for f in with {
        put_str(&mut b, &f.name);
        put_str(&mut b, &f.lines.file);
        put32(&mut b, f.lines.rows.len() as u32);
        for r in &f.lines.rows {
            put32(&mut b, r.offset);
            put32(&mut b, r.line);
        }
    }
    Some(b)
}

/// A data section to write: its name, whether it holds bytes (not
/// `SHT_NOBITS`), flags, alignment, contents (or only a size), relocations
/// (`r_offset` in the section, symbol, addend) and the data objects in it.
struct DataSection {
    name: &'static str,
    progbits: bool,
    flags: u32,
    align: u64,
    bytes: Vec<u8>,
    size: u64,
    relocs: Vec<(u64, String, i64)>,
}

/// The data sections of `obj`, in the order they are written.
fn data_sections(obj: &Object) -> Vec<DataSection> {
    let mut out = Vec::new();
    for (name, progbits, flags) in [
        (GLOBAL_SECTION, false, elf::SHF_ALLOC | elf::SHF_WRITE),
        (GLOBAL_INIT_SECTION, true, elf::SHF_ALLOC | elf::SHF_WRITE),
        (CONSTANT_SECTION, true, elf::SHF_ALLOC),
    ] {
        let objs: Vec<&DataObject> = obj.data.iter().filter(|d| d.section() == name).collect();
        if objs.is_empty() {
            continue;
        }
        let size = objs.iter().map(|d| u64::from(d.offset) + u64::from(d.size)).max().unwrap_or(0);
        let mut sec = DataSection {
            name,
            progbits,
            flags,
            align: objs.iter().map(|d| u64::from(d.align.max(1))).max().unwrap_or(1),
            bytes: if progbits { vec![0; size as usize] } else { Vec::new() },
            size,
            relocs: Vec::new(),
        };
        for d in objs {
            if let Some(init) = &d.init {
                let at = d.offset as usize;
                sec.bytes[at..at + init.len().min(d.size as usize)].copy_from_slice(&init[..init.len().min(d.size as usize)]);
            }
            for r in &d.relocs {
                sec.relocs.push((u64::from(d.offset) + r.offset, r.symbol.clone(), r.addend));
            }
        }
        out.push(sec);
    }
    if !obj.addresses.is_empty() {
        out.push(DataSection {
            name: ADDRESS_SECTION,
            progbits: true,
            flags: elf::SHF_ALLOC,
            align: 8,
            bytes: vec![0; obj.addresses.len() * 8],
            size: obj.addresses.len() as u64 * 8,
            relocs: obj.addresses.iter().enumerate().map(|(k, n)| (k as u64 * 8, n.clone(), 0)).collect(),
        });
    }
    out
}

/// Writes an object as ELF bytes.
pub fn write(obj: &Object) -> Vec<u8> {
    write_with_info(obj, info_bytes(obj, INFO_VERSION))
}

fn write_with_info(obj: &Object, info: Vec<u8>) -> Vec<u8> {
    let lines = lines_bytes(obj);
    let mut buf = Vec::new();
    let mut w = Writer::new(Endianness::Little, true, &mut buf);
    let text_names: Vec<Vec<u8>> = obj.functions.iter().map(|f| format!(".text.{}", f.name).into_bytes()).collect();
    let rela_names: Vec<Vec<u8>> = obj.functions.iter().map(|f| format!(".rela.text.{}", f.name).into_bytes()).collect();

    w.reserve_file_header();
    w.reserve_null_section_index();
    let mut text_idx = Vec::new();
    let mut text_name_ids = Vec::new();
    for n in &text_names {
        text_name_ids.push(w.add_section_name(n));
        text_idx.push(w.reserve_section_index());
    }
    let mut rela_idx = Vec::new();
    for (i, n) in rela_names.iter().enumerate() {
        if obj.functions[i].relocs.is_empty() {
            rela_idx.push(None);
        } else {
            let id = w.add_section_name(n);
            rela_idx.push(Some((id, w.reserve_section_index())));
        }
    }
    let info_name = w.add_section_name(INFO_SECTION.as_bytes());
    let info_idx = w.reserve_section_index();
    let lines_name = lines.as_ref().map(|_| {
        let name = w.add_section_name(LINES_SECTION.as_bytes());
        w.reserve_section_index();
        name
    });
    let data_secs = data_sections(obj);
    let data_rela_names: Vec<Vec<u8>> = data_secs.iter().map(|d| format!(".rela{}", d.name).into_bytes()).collect();
    let mut data_idx = Vec::new();
    for d in &data_secs {
        let name = w.add_section_name(d.name.as_bytes());
        data_idx.push((name, w.reserve_section_index()));
    }
    let mut data_rela_idx = Vec::new();
    for (d, n) in data_secs.iter().zip(&data_rela_names) {
        data_rela_idx.push(if d.relocs.is_empty() { None } else { Some(w.add_section_name(n)) });
        if !d.relocs.is_empty() {
            w.reserve_section_index();
        }
    }
    let symtab_idx = w.reserve_symtab_section_index();
    w.reserve_strtab_section_index();
    w.reserve_shstrtab_section_index();

    // Symbols: null, then one section symbol per text (local), then functions (global).
    w.reserve_null_symbol_index();
    let sym_names: Vec<_> = obj.functions.iter().map(|f| w.add_string(f.name.as_bytes())).collect();
    let mut sym_idx = Vec::new();
    for t in &text_idx {
        sym_idx.push(w.reserve_symbol_index(Some(*t)));
    }
    // Then one global object symbol per data object, in its section.
    let data_sym_names: Vec<_> = obj.data.iter().map(|d| w.add_string(d.name.as_bytes())).collect();
    let data_sec_of = |d: &DataObject| data_idx[data_secs.iter().position(|s| s.name == d.section()).unwrap()].1;
    let mut data_sym_idx = Vec::new();
    for d in &obj.data {
        data_sym_idx.push(w.reserve_symbol_index(Some(data_sec_of(d))));
    }
    let symbol_index = |name: &str| {
        obj.functions
            .iter()
            .position(|g| g.name == name)
            .map(|j| sym_idx[j].0)
            .or_else(|| obj.data.iter().position(|d| d.name == name).map(|j| data_sym_idx[j].0))
            .unwrap_or(0)
    };
    w.reserve_symtab();
    w.reserve_strtab();
    w.reserve_shstrtab();

    let mut text_off = Vec::new();
    for f in &obj.functions {
        text_off.push(w.reserve(f.code.len(), 16));
    }
    let mut rela_off = Vec::new();
    for f in &obj.functions {
        rela_off.push(if f.relocs.is_empty() { 0 } else { w.reserve_relocations(f.relocs.len(), true) });
    }
    let info_off = w.reserve(info.len(), 4);
    let lines_off = lines.as_ref().map(|l| w.reserve(l.len(), 4));
    let data_off: Vec<usize> =
        data_secs.iter().map(|d| if d.progbits { w.reserve(d.bytes.len(), d.align as usize) } else { w.reserve(0, 1) }).collect();
    let data_rela_off: Vec<usize> =
        data_secs.iter().map(|d| if d.relocs.is_empty() { 0 } else { w.reserve_relocations(d.relocs.len(), true) }).collect();
    w.reserve_section_headers();

    w.write_file_header(&WFileHeader {
        os_abi: elf::ELFOSABI_NONE,
        abi_version: 0,
        e_type: elf::ET_REL,
        e_machine: EM_URSA,
        e_entry: 0,
        e_flags: 0,
    })
    .expect("ELF header");
    w.write_null_symbol();
    for (i, f) in obj.functions.iter().enumerate() {
        w.write_symbol(&Sym {
            name: Some(sym_names[i]),
            section: Some(text_idx[i]),
            st_info: (elf::STB_GLOBAL << 4) | elf::STT_FUNC,
            st_other: elf::STV_DEFAULT,
            st_shndx: 0,
            st_value: 0,
            st_size: f.code.len() as u64,
        });
    }
    for (i, d) in obj.data.iter().enumerate() {
        w.write_symbol(&Sym {
            name: Some(data_sym_names[i]),
            section: Some(data_sec_of(d)),
            st_info: (elf::STB_GLOBAL << 4) | elf::STT_OBJECT,
            st_other: elf::STV_DEFAULT,
            st_shndx: 0,
            st_value: u64::from(d.offset),
            st_size: u64::from(d.size),
        });
    }
    w.write_strtab();
    w.write_shstrtab();
    for (i, f) in obj.functions.iter().enumerate() {
        w.write_align(16);
        debug_assert_eq!(w.len(), text_off[i]);
        w.write(&f.code);
    }
    for f in &obj.functions {
        if f.relocs.is_empty() {
            continue;
        }
        w.write_align_relocation();
        for r in &f.relocs {
            let target = obj.functions.iter().position(|g| g.name == r.symbol).map(|j| sym_idx[j].0).unwrap_or(0);
            w.write_relocation(true, &Rel { r_offset: r.offset, r_sym: target, r_type: R_URSA_REL32, r_addend: r.addend });
        }
    }
    w.write_align(4);
    w.write(&info);
    if let Some(l) = &lines {
        w.write_align(4);
        w.write(l);
    }
    for (d, &off) in data_secs.iter().zip(&data_off) {
        if d.progbits {
            w.write_align(d.align as usize);
            debug_assert_eq!(w.len(), off);
            w.write(&d.bytes);
        }
    }
    for d in &data_secs {
        if d.relocs.is_empty() {
            continue;
        }
        w.write_align_relocation();
        for (off, sym, addend) in &d.relocs {
            w.write_relocation(true, &Rel { r_offset: *off, r_sym: symbol_index(sym), r_type: R_URSA_ABS64, r_addend: *addend });
        }
    }

    w.write_null_section_header();
    for (i, f) in obj.functions.iter().enumerate() {
        w.write_section_header(&SectionHeader {
            name: Some(text_name_ids[i]),
            sh_type: elf::SHT_PROGBITS,
            sh_flags: (elf::SHF_ALLOC | elf::SHF_EXECINSTR) as u64,
            sh_addr: 0,
            sh_offset: text_off[i] as u64,
            sh_size: f.code.len() as u64,
            sh_link: 0,
            sh_info: 0,
            sh_addralign: 16,
            sh_entsize: 0,
        });
    }
    for (i, f) in obj.functions.iter().enumerate() {
        if let Some((name, _)) = rela_idx[i] {
            w.write_relocation_section_header(name, text_idx[i], symtab_idx, rela_off[i], f.relocs.len(), true);
        }
    }
    w.write_section_header(&SectionHeader {
        name: Some(info_name),
        sh_type: elf::SHT_PROGBITS,
        sh_flags: 0,
        sh_addr: 0,
        sh_offset: info_off as u64,
        sh_size: info.len() as u64,
        sh_link: 0,
        sh_info: 0,
        sh_addralign: 4,
        sh_entsize: 0,
    });
    if let (Some(name), Some(l), Some(off)) = (lines_name, &lines, lines_off) {
        w.write_section_header(&SectionHeader {
            name: Some(name),
            sh_type: elf::SHT_PROGBITS,
            sh_flags: 0,
            sh_addr: 0,
            sh_offset: off as u64,
            sh_size: l.len() as u64,
            sh_link: 0,
            sh_info: 0,
            sh_addralign: 4,
            sh_entsize: 0,
        });
    }
    for ((d, &(name, _)), &off) in data_secs.iter().zip(&data_idx).zip(&data_off) {
        w.write_section_header(&SectionHeader {
            name: Some(name),
            sh_type: if d.progbits { elf::SHT_PROGBITS } else { elf::SHT_NOBITS },
            sh_flags: u64::from(d.flags),
            sh_addr: 0,
            sh_offset: off as u64,
            sh_size: d.size,
            sh_link: 0,
            sh_info: 0,
            sh_addralign: d.align,
            sh_entsize: 0,
        });
    }
    for (i, d) in data_secs.iter().enumerate() {
        if let Some(name) = data_rela_idx[i] {
            w.write_relocation_section_header(name, data_idx[i].1, symtab_idx, data_rela_off[i], d.relocs.len(), true);
        }
    }
    let _ = info_idx;
    w.write_symtab_section_header(1);
    w.write_strtab_section_header();
    w.write_shstrtab_section_header();
    drop(w);
    buf
}

struct Reader<'a> {
    b: &'a [u8],
    pos: usize,
    /// The section read, for messages.
    section: &'static str,
}

impl<'a> Reader<'a> {
    fn u32(&mut self) -> Result<u32, ElfError> {
        let s = self.b.get(self.pos..self.pos + 4).ok_or_else(|| ElfError(format!("{} truncated at byte {}", self.section, self.pos)))?;
        self.pos += 4;
        Ok(u32::from_le_bytes(s.try_into().unwrap()))
    }
    fn str(&mut self) -> Result<String, ElfError> {
        let n = self.u32()? as usize;
        let s = self
            .b
            .get(self.pos..self.pos.saturating_add(n))
            .ok_or_else(|| ElfError(format!("{} truncated at byte {}", self.section, self.pos)))?;
        self.pos += n;
        String::from_utf8(s.to_vec()).map_err(|_| ElfError(format!("{}: name is not UTF-8", self.section)))
    }
}

/// Reads the `.ursa.lines` section `data` into the functions of `obj`.
fn read_lines(data: &[u8], obj: &mut Object) -> Result<(), ElfError> {
    if data.get(..4) != Some(LINES_MAGIC) {
        return bad(format!("{} has no URLN magic", LINES_SECTION));
    }
    let mut r = Reader { b: data, pos: 4, section: LINES_SECTION };
    let version = r.u32()?;
    if version != LINES_VERSION {
        return bad(format!("{} version {} is not supported", LINES_SECTION, version));
    }
    let n = r.u32()?;
    for _ in 0..n {
        let name = r.str()?;
        let file = r.str()?;
        let nrows = r.u32()? as usize;
        let f = obj
            .functions
            .iter_mut()
            .find(|f| f.name == name)
            .ok_or_else(|| ElfError(format!("{}: no function `{}`", LINES_SECTION, name)))?;
        if nrows > f.code.len() / crate::INST_BYTES {
            return bad(format!("{}: function `{}` has {} rows for {} instructions", LINES_SECTION, name, nrows, f.code.len() / 16));
        }
        let mut rows = Vec::with_capacity(nrows);
        for k in 0..nrows {
            let (offset, line) = (r.u32()?, r.u32()?);
            let in_order = match rows.last() {
                None => offset == 0,
                Some(&LineRow { offset: prev, .. }) => offset > prev,
            };
            if !in_order || offset as usize % crate::INST_BYTES != 0 || offset as usize >= f.code.len() {
                return bad(format!(
                    "{}: function `{}`, row {}: offset 0x{:x} is out of order or not an instruction",
                    LINES_SECTION, name, k, offset
                ));
            }
            rows.push(LineRow { offset, line });
        }
        f.lines = LineTable { file, rows };
    }
    Ok(())
}

/// Reads an Ursa object.
pub fn read(data: &[u8]) -> Result<Object, ElfError> {
    let file = ElfFile64::<Endianness>::parse(data).map_err(|e| ElfError(format!("not an ELF64 object: {}", e)))?;
    let hdr = file.elf_header();
    let e = file.endian();
    if hdr.e_machine(e) != EM_URSA {
        return bad(format!("machine 0x{:x} is not Ursa (0x{:x})", hdr.e_machine(e), EM_URSA));
    }
    if e != Endianness::Little {
        return bad("object is big-endian");
    }
    let info = file.section_by_name(INFO_SECTION).ok_or_else(|| ElfError(format!("missing {} section", INFO_SECTION)))?;
    let info = info.data().map_err(|e| ElfError(format!("{}: {}", INFO_SECTION, e)))?;
    let mut r = Reader { b: info, pos: 0, section: INFO_SECTION };
    if info.get(..4) != Some(INFO_MAGIC) {
        return bad(format!("{} has no URSA magic", INFO_SECTION));
    }
    r.pos = 4;
    let version = r.u32()?;
    if !(1..=INFO_VERSION).contains(&version) {
        return bad(format!("{} version {} is not supported", INFO_SECTION, version));
    }
    let n = r.u32()?;
    let mut obj = Object::default();
    for _ in 0..n {
        let name = r.str()?;
        let kernel = r.u32()? != 0;
        let shared_size = r.u32()?;
        let local_size = r.u32()?;
        let registers = if version >= 2 { r.u32()? } else { 0 };
        if registers > crate::RegFile::R.zero() {
            return bad(format!(
                "function `{}` records {} registers, more than the {} a thread can have",
                name,
                registers,
                crate::RegFile::R.zero()
            ));
        }
        let np = r.u32()?;
        if np > PARAM_BYTES {
            return bad(format!("function `{}` has {} parameters: more than the parameter block has bytes", name, np));
        }
        let mut params = Vec::new();
        for _ in 0..np {
            let pname = r.str()?;
            let offset = r.u32()?;
            let size = r.u32()?;
            if let Err(m) = param_room(offset, size) {
                return bad(format!("function `{}`, parameter `{}`: {}", name, pname, m));
            }
            let kind = if version >= 3 {
                let code = r.u32()?;
                match ParamKind::from_code(code) {
                    Some(k) if k.allows_size(size) => k,
                    Some(k) => return bad(format!("function `{}`, parameter `{}`: {:?} of {} bytes is no type", name, pname, k, size)),
                    None => return bad(format!("function `{}`, parameter `{}`: unknown kind {}", name, pname, code)),
                }
            } else {
                ParamKind::Bytes
            };
            params.push(Param { name: pname, offset, size, kind });
        }
        let sec_name = format!(".text.{}", name);
        let sec = file.section_by_name(&sec_name).ok_or_else(|| ElfError(format!("function `{}` has no {} section", name, sec_name)))?;
        let code = sec.data().map_err(|e| ElfError(format!("{}: {}", sec_name, e)))?.to_vec();
        if code.len() % 16 != 0 {
            return bad(format!("{} is {} bytes, not a whole number of 16-byte instructions", sec_name, code.len()));
        }
        let relocs = section_relocs(&file, &sec, &sec_name, R_URSA_REL32, code.len() as u64)?
            .into_iter()
            .map(|(offset, symbol, addend)| Reloc { offset, symbol, addend })
            .collect();
        obj.functions.push(Function {
            name,
            kernel,
            code,
            params,
            relocs,
            shared_size,
            local_size,
            registers,
            lines: LineTable::default(),
        });
    }
    // The line tables are optional: an object without them loads.
    if let Some(sec) = file.section_by_name(LINES_SECTION) {
        let data = sec.data().map_err(|e| ElfError(format!("{}: {}", LINES_SECTION, e)))?;
        read_lines(data, &mut obj)?;
    }
    read_data(&file, &mut obj)?;
    Ok(obj)
}

/// The relocations of the section `sec` (named `name`, of `size` bytes):
/// offset in the section, symbol name, addend. Each must be of type
/// `r_type` ([`R_URSA_REL32`], 4 bytes, in code; [`R_URSA_ABS64`], 8 bytes,
/// in data), name a symbol and lie inside the section.
fn section_relocs(
    file: &ElfFile64<Endianness>,
    sec: &object::read::elf::ElfSection64<Endianness>,
    name: &str,
    r_type: u32,
    size: u64,
) -> Result<Vec<(u64, String, i64)>, ElfError> {
    let (type_name, width, room) =
        if r_type == R_URSA_REL32 { ("R_URSA_REL32", 4, "the code") } else { ("R_URSA_ABS64", 8, "the section") };
    let mut out = Vec::new();
    for (off, rel) in sec.relocations() {
        let RelocationFlags::Elf { r_type: t } = rel.flags() else { return bad("non-ELF relocation") };
        if t != r_type {
            return bad(format!("{}: unknown relocation type {} at 0x{:x} (not {})", name, t, off, type_name));
        }
        let RelocationTarget::Symbol(si) = rel.target() else {
            return bad(format!("{}: relocation at 0x{:x} has no symbol", name, off));
        };
        let sym = file.symbol_by_index(si).map_err(|e| ElfError(format!("{}: relocation at 0x{:x}: {}", name, off, e)))?;
        let sname = sym.name().map_err(|e| ElfError(format!("{}: relocation at 0x{:x}: {}", name, off, e)))?;
        if sname.is_empty() {
            return bad(format!("{}: relocation at 0x{:x} names no symbol", name, off));
        }
        if off.checked_add(width).is_none_or(|end| end > size) {
            return bad(format!("{}: relocation at 0x{:x} is outside {} ({} bytes)", name, off, room, size));
        }
        out.push((off, sname.to_string(), rel.addend()));
    }
    Ok(out)
}

/// Reads the data objects (the object symbols of the data sections, their
/// contents and relocations) and the address table into `obj`.
fn read_data(file: &ElfFile64<Endianness>, obj: &mut Object) -> Result<(), ElfError> {
    // The symbol index of each object read.
    let mut order = Vec::new();
    for name in [GLOBAL_SECTION, GLOBAL_INIT_SECTION, CONSTANT_SECTION] {
        let Some(sec) = file.section_by_name(name) else { continue };
        let nobits = name == GLOBAL_SECTION;
        let size = sec.size();
        let limit = if name == CONSTANT_SECTION { u64::from(BANK_BYTES) } else { 1 << 32 };
        if size > limit {
            return bad(format!("{} is {} bytes, more than the {} it may hold", name, size, limit));
        }
        let bytes = if nobits { &[][..] } else { sec.data().map_err(|e| ElfError(format!("{}: {}", name, e)))? };
        if !nobits && bytes.len() as u64 != size {
            return bad(format!("{}: {} bytes of contents for a section of {}", name, bytes.len(), size));
        }
        let sec_align = sec.align().clamp(1, 1 << 31);
        let first = obj.data.len();
        let mut symbols = Vec::new();
        for sym in file.symbols().filter(|s| s.section_index() == Some(sec.index())) {
            if sym.kind() != object::SymbolKind::Data {
                continue;
            }
            let sname = sym.name().map_err(|e| ElfError(format!("{}: symbol: {}", name, e)))?.to_string();
            let (value, len) = (sym.address(), sym.size());
            if value.checked_add(len).is_none_or(|end| end > size) {
                return bad(format!(
                    "{}: data object `{}` ({} bytes at 0x{:x}) overflows the section ({} bytes)",
                    name, sname, len, value, size
                ));
            }
            if obj.function(&sname).is_some() || obj.data.iter().any(|d| d.name == sname) {
                return bad(format!("{}: the symbol `{}` is defined twice", name, sname));
            }
            // Each object is as aligned as its section and its offset allow.
            let align = if value == 0 { sec_align } else { sec_align.min(1 << value.trailing_zeros()) } as u32;
            symbols.push(sym.index().0);
            obj.data.push(DataObject {
                name: sname,
                space: if name == CONSTANT_SECTION { DataSpace::Constant } else { DataSpace::Global },
                offset: value as u32,
                size: len as u32,
                align,
                init: (!nobits).then(|| bytes[value as usize..(value + len) as usize].to_vec()),
                relocs: Vec::new(),
            });
        }
        for (off, sym, addend) in section_relocs(file, &sec, name, R_URSA_ABS64, size)? {
            if nobits {
                return bad(format!("{}: relocation at 0x{:x} in a section without contents", name, off));
            }
            let Some(d) =
                obj.data[first..].iter_mut().find(|d| u64::from(d.offset) <= off && off + 8 <= u64::from(d.offset) + u64::from(d.size))
            else {
                return bad(format!("{}: relocation at 0x{:x} is in no data object", name, off));
            };
            d.relocs.push(Reloc { offset: off - u64::from(d.offset), symbol: sym, addend });
        }
        order.extend(symbols);
    }
    // The objects in the order of their symbols (the writer's order).
    let mut keyed: Vec<(usize, DataObject)> = order.into_iter().zip(std::mem::take(&mut obj.data)).collect();
    keyed.sort_by_key(|(k, _)| *k);
    obj.data = keyed.into_iter().map(|(_, d)| d).collect();
    if let Some(sec) = file.section_by_name(ADDRESS_SECTION) {
        let size = sec.size();
        if size % 8 != 0 || size > u64::from(BANK_BYTES) {
            return bad(format!("{} is {} bytes: not a table of 8-byte addresses in {} bytes", ADDRESS_SECTION, size, BANK_BYTES));
        }
        let mut table = vec![None; (size / 8) as usize];
        for (off, sym, addend) in section_relocs(file, &sec, ADDRESS_SECTION, R_URSA_ABS64, size)? {
            if off % 8 != 0 || addend != 0 || table[(off / 8) as usize].is_some() {
                return bad(format!("{}: relocation at 0x{:x} is not the one address of an entry", ADDRESS_SECTION, off));
            }
            if !obj.data.iter().any(|d| d.name == sym) {
                return bad(format!("{}: entry at 0x{:x} names `{}`, no data object", ADDRESS_SECTION, off, sym));
            }
            table[(off / 8) as usize] = Some(sym);
        }
        obj.addresses = table
            .into_iter()
            .enumerate()
            .map(|(k, n)| n.ok_or_else(|| ElfError(format!("{}: entry at 0x{:x} has no relocation", ADDRESS_SECTION, k * 8))))
            .collect::<Result<_, _>>()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_read_round_trip() {
        let obj = Object {
            functions: vec![
                Function {
                    name: "k".into(),
                    kernel: true,
                    code: vec![0u8; 32],
                    params: vec![
                        Param { name: "out".into(), offset: 0, size: 8, kind: ParamKind::Ptr },
                        Param { name: "n".into(), offset: 8, size: 4, kind: ParamKind::Int },
                        Param { name: "x".into(), offset: 16, size: 8, kind: ParamKind::Float },
                        Param { name: "v".into(), offset: 32, size: 16, kind: ParamKind::Bytes },
                    ],
                    relocs: vec![Reloc { offset: 20, symbol: "f".into(), addend: -12 }],
                    shared_size: 64,
                    local_size: 16,
                    registers: 40,
                    lines: LineTable::default(),
                },
                Function { name: "f".into(), kernel: false, code: vec![1u8; 16], ..Default::default() },
            ],
            ..Default::default()
        };
        let bytes = write(&obj);
        assert_eq!(read(&bytes).unwrap(), obj);
        // With a line table on one function.
        let mut with_lines = obj.clone();
        with_lines.functions[0].lines = LineTable::from_lines("k.clif", [None, Some(7)]);
        assert_eq!(with_lines.functions[0].lines.rows, vec![LineRow { offset: 0, line: 7 }]);
        assert_eq!(read(&write(&with_lines)).unwrap(), with_lines);
    }

    #[test]
    fn line_tables() {
        let t = LineTable::from_lines("a.clif", [None, Some(3), None, Some(3), Some(5), None, Some(4)]);
        let rows: Vec<(u32, u32)> = t.rows.iter().map(|r| (r.offset, r.line)).collect();
        assert_eq!(rows, vec![(0, 3), (64, 5), (96, 4)]);
        assert_eq!(t.location_at(0).as_deref(), Some("a.clif:3"));
        assert_eq!(t.location_at(48).as_deref(), Some("a.clif:3"));
        assert_eq!(t.location_at(80).as_deref(), Some("a.clif:5"));
        assert_eq!(t.location_at(96).as_deref(), Some("a.clif:4"));
        assert!(LineTable::from_lines("a.clif", [None, None]).is_empty());
        assert_eq!(LineTable::from_lines("", [Some(2)]).location_at(0).as_deref(), Some("line 2"));
        // A table that does not fit the code is refused, not trusted.
        let mut obj =
            Object { functions: vec![Function { name: "k".into(), code: vec![0u8; 32], ..Default::default() }], ..Default::default() };
        obj.functions[0].lines =
            LineTable { file: "a".into(), rows: vec![LineRow { offset: 0, line: 1 }, LineRow { offset: 48, line: 2 }] };
        assert!(read(&write(&obj)).unwrap_err().to_string().contains("out of order"), "{:?}", read(&write(&obj)));
    }

    #[test]
    fn older_versions_still_load() {
        // Version 1 has no register count, versions 1 and 2 no parameter
        // kinds: they read as 0 (not recorded) and as untyped bytes.
        let param = |kind| Param { name: "n".into(), offset: 0, size: 4, kind };
        let f = Function {
            name: "k".into(),
            kernel: true,
            code: vec![0u8; 16],
            registers: 7,
            params: vec![param(ParamKind::Int)],
            ..Default::default()
        };
        let obj = Object { functions: vec![f.clone()], ..Default::default() };
        for version in [1, 2] {
            let read_back = read(&write_with_info(&obj, info_bytes(&obj, version))).unwrap();
            let registers = if version == 1 { 0 } else { 7 };
            assert_eq!(
                read_back.functions[0],
                Function { registers, params: vec![param(ParamKind::Bytes)], ..f.clone() },
                "version {}",
                version
            );
        }
        assert_eq!(read(&write(&obj)).unwrap(), obj);
        let mut future = info_bytes(&obj, INFO_VERSION);
        future[4..8].copy_from_slice(&(INFO_VERSION + 1).to_le_bytes());
        assert!(read(&write_with_info(&obj, future)).unwrap_err().to_string().contains("version 4 is not supported"));
    }

    #[test]
    fn parameter_kinds_are_checked_on_load() {
        let with = |kind_code: u32, size: u32| {
            let f = Function {
                name: "k".into(),
                kernel: true,
                code: vec![0u8; 16],
                params: vec![Param { name: "p".into(), offset: 0, size, kind: ParamKind::Bytes }],
                ..Default::default()
            };
            let obj = Object { functions: vec![f], ..Default::default() };
            let mut info = info_bytes(&obj, INFO_VERSION);
            let n = info.len();
            info[n - 4..].copy_from_slice(&kind_code.to_le_bytes());
            read(&write_with_info(&obj, info))
        };
        assert_eq!(with(2, 8).unwrap().functions[0].params[0].kind, ParamKind::Float);
        assert!(with(9, 4).unwrap_err().to_string().contains("unknown kind 9"), "{:?}", with(9, 4));
        assert!(with(2, 2).is_err(), "a 2-byte float");
        assert!(with(3, 4).is_err(), "a 4-byte pointer");
        assert!(with(1, 3).is_err(), "a 3-byte integer");
    }

    #[test]
    fn arguments_match_parameter_types() {
        let p = |kind, size| Param { name: "p".into(), offset: 0, size, kind };
        assert!(p(ParamKind::Int, 4).accepts(ParamKind::Int, 4));
        assert!(!p(ParamKind::Int, 4).accepts(ParamKind::Float, 4));
        assert!(!p(ParamKind::Float, 8).accepts(ParamKind::Int, 8));
        assert!(p(ParamKind::Int, 8).accepts(ParamKind::Ptr, 8), "a buffer for a CLIF i64");
        assert!(p(ParamKind::Ptr, 8).accepts(ParamKind::Int, 8), "an address as a number");
        assert!(!p(ParamKind::Ptr, 8).accepts(ParamKind::Float, 8));
        assert!(!p(ParamKind::Int, 4).accepts(ParamKind::Int, 8));
        assert!(p(ParamKind::Bytes, 4).accepts(ParamKind::Float, 4));
        assert!(!p(ParamKind::Bytes, 4).accepts(ParamKind::Float, 8));
        assert!(p(ParamKind::Float, 4).accepts(ParamKind::Bytes, 4));
        for t in ["i8", "i16", "i32", "i64", "i128", "f32", "f64", "ptr"] {
            let (k, size) = ParamKind::parse_type(t).unwrap();
            assert!(k.allows_size(size));
            assert_eq!(k.type_name(size), t);
        }
    }

    #[test]
    fn register_count_from_code() {
        let obj = crate::asm::assemble(".kernel k\n IADD R9, R4, 0x1 ;\n STG.64 [R[2:3]], R[10:11] ;\n EXIT ;\n", "t.s").unwrap();
        assert_eq!(obj.functions[0].registers, 12);
        assert_eq!(registers_in_code(&obj.functions[0].code), 12);
        let obj = crate::asm::assemble(".kernel k\n.regs 64\n IADD R9, R4, 0x1 ;\n EXIT ;\n", "t.s").unwrap();
        assert_eq!(obj.functions[0].registers, 64);
        assert_eq!(registers_in_code(&crate::asm::assemble(".kernel k\n EXIT ;\n", "t.s").unwrap().functions[0].code), 0);
    }

    /// An object with a kernel and data objects of every section, with
    /// relocations against a function and a data object.
    fn with_data() -> Object {
        let mut data = vec![
            DataObject { name: "zeros".into(), size: 12, align: 4, ..Default::default() },
            DataObject {
                name: "init".into(),
                size: 16,
                align: 8,
                init: Some((0..16).collect()),
                relocs: vec![Reloc { offset: 8, symbol: "k".into(), addend: 16 }],
                ..Default::default()
            },
            DataObject {
                name: "table".into(),
                space: DataSpace::Constant,
                size: 8,
                align: 16,
                init: Some(vec![0; 8]),
                relocs: vec![Reloc { offset: 0, symbol: "init".into(), addend: -4 }],
                ..Default::default()
            },
        ];
        layout_data(&mut data).unwrap();
        Object {
            functions: vec![Function { name: "k".into(), kernel: true, code: vec![0u8; 16], ..Default::default() }],
            addresses: data.iter().map(|d| d.name.clone()).collect(),
            data,
        }
    }

    #[test]
    fn data_objects_round_trip() {
        let obj = with_data();
        assert_eq!(read(&write(&obj)).unwrap(), obj);
        // Offsets follow each section's alignment, in order.
        let mut data = vec![
            DataObject { name: "a".into(), size: 3, align: 1, ..Default::default() },
            DataObject { name: "b".into(), size: 4, align: 8, ..Default::default() },
        ];
        layout_data(&mut data).unwrap();
        assert_eq!((data[0].offset, data[1].offset), (0, 8));
        let mut big =
            vec![DataObject { name: "c".into(), space: DataSpace::Constant, size: BANK_BYTES + 1, align: 4, ..Default::default() }];
        assert!(layout_data(&mut big).unwrap_err().contains("`c`"));
    }

    /// The file offset of the `size` field of symbol `name` in `bytes`.
    fn symbol_size_field(bytes: &[u8], name: &str) -> usize {
        let file = ElfFile64::<Endianness>::parse(bytes).unwrap();
        let sym = file.symbols().find(|s| s.name() == Ok(name)).unwrap();
        let symtab = file.section_by_name(".symtab").unwrap();
        symtab.file_range().unwrap().0 as usize + sym.index().0 * 24 + 16
    }

    /// The file offset of the `r_offset` of the first relocation of the
    /// relocation section `name`.
    fn first_rela(bytes: &[u8], name: &str) -> usize {
        let file = ElfFile64::<Endianness>::parse(bytes).unwrap();
        file.section_by_name(name).unwrap().file_range().unwrap().0 as usize
    }

    #[test]
    fn malformed_data_is_an_error_naming_the_place() {
        let good = write(&with_data());
        let err = |bytes: &[u8]| read(bytes).unwrap_err().to_string();
        // A symbol that overflows its section.
        let mut b = good.clone();
        let at = symbol_size_field(&b, "table");
        b[at..at + 8].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(err(&b).contains(".ursa.constant3: data object `table`") && err(&b).contains("overflows"), "{}", err(&b));
        // A relocation outside its section, and one outside every object.
        let mut b = good.clone();
        let at = first_rela(&b, ".rela.ursa.global.init");
        b[at..at + 8].copy_from_slice(&0x1000u64.to_le_bytes());
        assert!(err(&b).contains(".ursa.global.init: relocation at 0x1000 is outside the section"), "{}", err(&b));
        let mut obj = with_data();
        obj.data[1].relocs[0].offset = 12;
        obj.data[1].size = 16;
        let mut b = write(&obj);
        let at = first_rela(&b, ".rela.ursa.global.init");
        b[at..at + 8].copy_from_slice(&(obj.data[1].offset as u64 + 12).to_le_bytes());
        assert!(err(&b).contains("is outside the section") || err(&b).contains("in no data object"), "{}", err(&b));
        // A relocation of another type.
        let mut b = good.clone();
        let at = first_rela(&b, ".rela.ursa.constant3") + 8;
        b[at..at + 4].copy_from_slice(&R_URSA_REL32.to_le_bytes());
        assert!(err(&b).contains(".ursa.constant3: unknown relocation type 1 at 0x0 (not R_URSA_ABS64)"), "{}", err(&b));
        // A relocation against no symbol.
        let mut obj = with_data();
        obj.data[2].relocs[0].symbol = "missing".into();
        assert!(err(&write(&obj)).contains(".ursa.constant3: relocation at 0x0 has no symbol"), "{}", err(&write(&obj)));
        // An address-table entry without its relocation.
        let mut b = good.clone();
        let at = first_rela(&b, ".rela.ursa.constant14") + 8;
        b[at..at + 4].copy_from_slice(&R_URSA_REL32.to_le_bytes());
        assert!(err(&b).contains(".ursa.constant14"), "{}", err(&b));
        // Truncated: every prefix is an error or a valid object, never a panic.
        for n in (0..good.len()).step_by(7) {
            let _ = read(&good[..n]);
        }
    }

    #[test]
    fn garbage_is_an_error() {
        assert!(read(b"not an elf").is_err());
        assert!(read(&[0x7f, b'E', b'L', b'F', 2, 1, 1, 0]).is_err());
    }
}
