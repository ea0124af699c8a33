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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endless_file_is_cut_at_the_limit() {
        let e = read_bounded(Path::new("/dev/zero"), 3 << 20, "test").unwrap_err();
        assert_eq!(e, "/dev/zero: longer than the test limit of 3145728 bytes (3 MiB)");
    }
}
