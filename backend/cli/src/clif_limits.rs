//! A check of CLIF text before it reaches `cranelift-reader`: the reader
//! creates every entity numbered below one it meets (`block3000000000` makes
//! three billion blocks), so such a file hangs and exhausts memory instead of
//! being rejected. Found by the `clif` fuzz target.

/// The largest entity number accepted (`block`, `v`, `ss`, `fn`, …).
pub const MAX_ENTITY_NUMBER: u64 = 1_000_000;

/// The entity prefixes of CLIF text.
const PREFIXES: [&str; 12] = ["block", "v", "ss", "dss", "dt", "gv", "mt", "sig", "fn", "jt", "const", "inst"];

/// Rejects text naming an entity with a number above
/// [`MAX_ENTITY_NUMBER`], with the line (1-based) and the token. Comments
/// (from `;`) and names (`%…`, `u0:…` are not entities) are not looked at.
pub fn check(text: &str) -> Result<(), String> {
    for (i, line) in text.lines().enumerate() {
        let code = line.split(';').next().unwrap_or("");
        for tok in code.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '%')) {
            if tok.starts_with('%') {
                continue;
            }
            let digits = tok.trim_start_matches(|c: char| c.is_ascii_alphabetic());
            let prefix = &tok[..tok.len() - digits.len()];
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) || !PREFIXES.contains(&prefix) {
                continue;
            }
            if digits.len() > 7 || digits.parse::<u64>().map_or(true, |n| n > MAX_ENTITY_NUMBER) {
                return Err(format!("line {}: `{}`: entity numbers above {} are not supported", i + 1, tok, MAX_ENTITY_NUMBER));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::check;

    #[test]
    fn huge_entity_numbers_are_refused_with_the_line() {
        let ok = "function %f(i32) -> i32 {\n    ss1000000 = explicit_slot 8\nblock0(v0: i32):\n    jump block1000000\nblock1000000:\n    return v0\n}\n";
        assert_eq!(check(ok), Ok(()));
        let e = check("function %f() {\nblock0:\n    jump block3000000000\n}\n").unwrap_err();
        assert!(e.starts_with("line 3: `block3000000000`"), "{}", e);
        assert!(check("function %f() {\n    ss1000001 = explicit_slot 8\n").is_err());
        assert!(check("    v99999999999999999999999 = iconst.i32 0\n").is_err());
    }

    #[test]
    fn comments_names_and_other_words_are_not_entities() {
        assert_eq!(check("; run: %f(12586269025) == block99999999999\n"), Ok(()));
        assert_eq!(check("function %block99999999999() {\n"), Ok(()));
        assert_eq!(check("    v1 = iconst.i64 9999999999999\n"), Ok(()));
        assert_eq!(check("    v1 = load.i64 v0+4294967296\n"), Ok(()));
        assert_eq!(check("    vv99999999 = x\n"), Ok(()));
    }
}
