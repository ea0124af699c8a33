//! Reading the files a command is given, each with a size limit: a device
//! (`/dev/zero`), a pipe or a huge file ends in a clear error instead of
//! filling memory.

use std::io::Read;
use std::path::Path;

/// The largest input file a command reads (CLIF, assembly, an object): 256 MiB.
pub const MAX_INPUT_BYTES: u64 = 256 << 20;

/// The contents of `path`, at most `limit` bytes; a longer file is an error
/// naming `what` limit was passed.
pub fn read_bounded(path: &Path, limit: u64, what: &str) -> Result<Vec<u8>, String> {
    let f = std::fs::File::open(path).map_err(|e| format!("{}: {}", path.display(), e))?;
    let mut data = Vec::new();
    f.take(limit + 1).read_to_end(&mut data).map_err(|e| format!("{}: {}", path.display(), e))?;
    if data.len() as u64 > limit {
        return Err(format!("{}: longer than the {} limit of {} bytes ({} MiB)", path.display(), what, limit, limit >> 20));
    }
    Ok(data)
}

/// An input file: at most [`MAX_INPUT_BYTES`].
pub fn read_input(path: &Path) -> Result<Vec<u8>, String> {
    read_bounded(path, MAX_INPUT_BYTES, "input")
}

/// An input text file (CLIF, assembly): at most [`MAX_INPUT_BYTES`], UTF-8.
pub fn read_text(path: &Path) -> Result<String, String> {
    String::from_utf8(read_input(path)?).map_err(|e| format!("{}: not UTF-8 text (byte {})", path.display(), e.utf8_error().valid_up_to()))
}

/// `f` with every instruction's source location set to its line in the
/// text it was parsed from (`details`, the parser's source map): what the
/// compiler records in the object's line table (`docs/binary-format.md`).
/// Locations the text gave (`@0012`) are replaced.
pub fn with_line_locations(mut f: cranelift_codegen::ir::Function, details: &cranelift_reader::Details) -> cranelift_codegen::ir::Function {
    use cranelift_codegen::ir::{entities::AnyEntity, SourceLoc};
    let insts: Vec<_> = f.layout.blocks().flat_map(|b| f.layout.block_insts(b)).collect();
    for inst in insts {
        if let Some(loc) = details.map.location(AnyEntity::Inst(inst)) {
            f.set_srcloc(inst, SourceLoc::new(loc.line_number as u32));
        }
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endless_file_is_cut_at_the_limit() {
        let e = read_bounded(Path::new("/dev/zero"), 3 << 20, "test").unwrap_err();
        assert_eq!(e, "/dev/zero: longer than the test limit of 3145728 bytes (3 MiB)");
    }
}
