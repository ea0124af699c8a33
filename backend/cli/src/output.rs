//! Writing a command's result: to a file, or to standard output when the
//! path is `-` (as `ursa compile -o - f.clif | …`).

use std::io::Write;
use std::path::Path;

/// Whether `path` names standard output.
pub fn is_stdout(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// Writes `bytes` to `path`, or to standard output for `-`; an error names
/// the path.
pub fn write_output(path: &Path, bytes: &[u8]) -> Result<(), String> {
    if is_stdout(path) {
        let mut out = std::io::stdout().lock();
        return out.write_all(bytes).and_then(|_| out.flush()).map_err(|e| format!("standard output: {}", e));
    }
    std::fs::write(path, bytes).map_err(|e| format!("{}: {}", path.display(), e))
}

/// Refuses `-o -` with an option that prints text to standard output too
/// (`what`): the object and the text would be mixed.
pub fn check_stdout_free(output: Option<&Path>, printing: Option<&str>) -> Result<(), String> {
    match (output, printing) {
        (Some(o), Some(what)) if is_stdout(o) => {
            Err(format!("-o - writes the object to standard output, where {} prints too: give -o a file", what))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dash_is_standard_output_and_a_file_is_written() {
        assert!(is_stdout(Path::new("-")));
        assert!(!is_stdout(Path::new("./-")));
        let dir = std::env::temp_dir().join(format!("ursa-output-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("x.o");
        write_output(&p, b"abc").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"abc");
        let e = write_output(&dir.join("no/such/dir/x.o"), b"").unwrap_err();
        assert!(e.contains("no/such/dir/x.o"), "{}", e);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn stdout_is_refused_beside_printed_text() {
        assert!(check_stdout_free(Some(Path::new("-")), Some("-S")).is_err());
        assert!(check_stdout_free(Some(Path::new("-")), None).is_ok());
        assert!(check_stdout_free(Some(Path::new("a.o")), Some("-S")).is_ok());
        assert!(check_stdout_free(None, Some("-S")).is_ok());
    }
}
