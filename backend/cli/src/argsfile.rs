//! `@FILE` arguments: an argument `@PATH` on the command line stands for the
//! words of the file `PATH` (as rustc and gcc take them): each
//! whitespace-separated word of the file is one argument, in order, with no
//! quoting. This is how `ursa run` takes more data than the operating system
//! allows on a command line (e.g. a long `--arg buf:a=i32:…` list). A word of
//! a file that starts with `@` is an argument as written (no nesting). Each
//! argument keeps where it came from, so that errors about it can name the
//! file and line.

use std::ffi::OsString;
use std::path::Path;

/// The command line with every `@FILE` replaced by the file's words.
pub struct Expanded {
    pub args: Vec<OsString>,
    /// For each of `args`: `FILE:LINE` if it comes from a file.
    pub origins: Vec<Option<String>>,
}

/// Expands the `@FILE` arguments of `args` (each file at most
/// [`crate::input::MAX_INPUT_BYTES`], UTF-8 text); an error names the file,
/// and the line where the text is not UTF-8.
pub fn expand(args: impl IntoIterator<Item = OsString>) -> Result<Expanded, String> {
    let mut out = Expanded { args: Vec::new(), origins: Vec::new() };
    for arg in args {
        let Some(path) = arg.to_str().and_then(|s| s.strip_prefix('@')).filter(|p| !p.is_empty()) else {
            out.args.push(arg);
            out.origins.push(None);
            continue;
        };
        let bytes = crate::input::read_input(Path::new(path)).map_err(|e| format!("@{}", e))?;
        for (n, line) in bytes.split(|&b| b == b'\n').enumerate() {
            let line = std::str::from_utf8(line)
                .map_err(|e| format!("@{}:{}: not UTF-8 text (byte {} of the line)", path, n + 1, e.valid_up_to() + 1))?;
            for word in line.split_whitespace() {
                out.args.push(word.into());
                out.origins.push(Some(format!("{}:{}", path, n + 1)));
            }
        }
    }
    Ok(out)
}

impl Expanded {
    /// Where each of `values`, the values of `option` (`--arg`) in the
    /// order given, comes from: `FILE:LINE` for a value from a file. Found in
    /// order, each the next argument that is the value (`--arg V`) or the
    /// option with it (`--arg=V`).
    pub fn origins_of_values(&self, option: &str, values: &[String]) -> Vec<Option<String>> {
        let mut next = 0;
        values
            .iter()
            .map(|v| {
                let joined = format!("{}={}", option, v);
                let at = (next..self.args.len()).find(|&i| self.args[i].to_str().is_some_and(|a| a == v || a == joined))?;
                next = at + 1;
                self.origins[at].clone()
            })
            .collect()
    }

    /// Where an argument that a command-line parser error quotes (`word`)
    /// comes from, if from a file: that of the first argument from a file
    /// equal to it.
    pub fn origin_of(&self, word: &str) -> Option<&str> {
        self.args.iter().zip(&self.origins).find(|(a, o)| o.is_some() && a.to_str() == Some(word)).and_then(|(_, o)| o.as_deref())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_of_a_file_replace_it_with_their_lines() {
        let path = std::env::temp_dir().join(format!("ursa-argsfile-{}.txt", std::process::id()));
        std::fs::write(&path, "--grid 2\n\n  --arg\tbuf:a=i32:1,2 \n").unwrap();
        let at = format!("@{}", path.display());
        let e = expand(["ursa", "run", &at, "@"].map(OsString::from)).unwrap();
        assert_eq!(e.args, ["ursa", "run", "--grid", "2", "--arg", "buf:a=i32:1,2", "@"]);
        let p = path.display();
        let want =
            [None, None, Some(format!("{}:1", p)), Some(format!("{}:1", p)), Some(format!("{}:3", p)), Some(format!("{}:3", p)), None];
        assert_eq!(e.origins, want);
        assert_eq!(e.origin_of("buf:a=i32:1,2"), Some(format!("{}:3", p).as_str()));
        assert_eq!(e.origin_of("run"), None);
        let vals = ["buf:a=i32:1,2".to_string()];
        assert_eq!(e.origins_of_values("--arg", &vals), [Some(format!("{}:3", p))]);
        std::fs::remove_file(&path).unwrap();
    }
}
