//! `ursa run`'s arguments from files: typed buffers read from files
//! (`buf:NAME=TYPE:file:PATH`), printed in their type; empty buffers
//! (`buf:NAME=TYPE:`); `@FILE` arguments, for more data than a command
//! line holds, whose errors name the file and the line.
mod common;
use common::*;

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Writes bytes to a scratch file; its path.
fn write_bytes(name: &str, data: &[u8]) -> String {
    let p = tmp(name);
    std::fs::write(&p, data).unwrap();
    p.to_str().unwrap().to_string()
}

/// `ursa run` of `examples/vadd.s` (`out[i] = a[i] + b[i]`, `n: i32`) with `args`.
fn vadd(args: &[&str]) -> std::process::Output {
    static OBJ: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    let obj = OBJ.get_or_init(|| vadd_object("vadd.o"));
    let mut all = vec!["run", obj.to_str().unwrap(), "--kernel", "vadd"];
    all.extend_from_slice(args);
    ursa(&all)
}

/// [`vadd`] with the whitespace-separated words of `line`.
fn vadd_words(line: &str) -> std::process::Output {
    vadd(&line.split_whitespace().collect::<Vec<_>>())
}

#[test]
fn typed_buffers_from_files_print_in_their_type() {
    let a: Vec<u8> = [1i32, -2, 3].iter().flat_map(|v| v.to_le_bytes()).collect();
    let a = write_bytes("a.i32", &a);
    let (fa, fb) = (format!("buf:a=i32:file:{}", a), format!("buf:b=u32:file:{}", a));
    let o = vadd_words(&format!("--block 4 --arg {} --arg {} --arg buf:out=i32[3] --arg i32:3 --out a --out b --out out", fa, fb));
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "a = [1, -2, 3]\nb = [1, 4294967294, 3]\nout = [2, -4, 6]\n");
    // An untyped file is bytes.
    let fu = format!("buf:a=file:{}", a);
    let o = vadd(&["--arg", &fu, "--arg", "buf:b=i32[3]", "--arg", "buf:out=i32[3]", "--arg", "i32:0", "--out", "a"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "a = [1, 0, 0, 0, 254, 255, 255, 255, 3, 0, 0, 0]\n");
}

#[test]
fn bad_buffer_files_are_errors_naming_the_argument() {
    let five = write_bytes("five.bin", &[0; 5]);
    let missing = tmp("missing.bin").to_str().unwrap().to_string();
    for (spec, want) in [
        (
            format!("buf:a=i32:file:{}", five),
            format!("argument 1 (`buf:a=i32:file:{0}`): {0}: 5 bytes are not a whole number of i32 (4 bytes each)", five),
        ),
        (format!("buf:a=i32:file:{}", missing), format!("argument 1 (`buf:a=i32:file:{0}`): {0}: No such file or directory", missing)),
        (format!("buf:a=i33:file:{}", five), "argument 1 (`buf:a=i33:file:".to_string() + &five + "`): unknown element type `i33`"),
        ("buf:a=i32".to_string(), "argument 1 (`buf:a=i32`): expected buf:NAME=TYPE[N], buf:NAME=TYPE:v1,v2".to_string()),
        ("buf:a=i32:1,,2".to_string(), "argument 1 (`buf:a=i32:1,,2`): `` is not a value of type i32".to_string()),
        ("buf:a=i32:/dev/zero".to_string(), "`/dev/zero` is not a value of type i32".to_string()),
    ] {
        let o = vadd(&["--arg", &spec, "--arg", "buf:b=i32[1]", "--arg", "buf:out=i32[1]", "--arg", "i32:1"]);
        assert!(!o.status.success() && stderr(&o).contains(&want), "{}: {}", spec, stderr(&o));
    }
    let o = vadd(&["--arg", "buf:a=f64:file:/dev/zero", "--arg", "buf:b=i32[1]", "--arg", "buf:out=i32[1]", "--arg", "i32:1"]);
    assert!(stderr(&o).contains("buffer limit"), "{}", stderr(&o));
}

#[test]
fn empty_lists_are_empty_buffers() {
    let o = vadd_words("--arg buf:a=i32: --arg buf:b=f64: --arg buf:out=i32[0] --arg i32:0 --out a --out b --out out");
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "a = []\nb = []\nout = []\n");
}

#[test]
fn argument_files_take_more_than_a_command_line() {
    // 60000 elements: each list is about 330 KB, more than the 128 KiB the
    // OS allows one command-line argument.
    let n = 60_000;
    let list = |f: &dyn Fn(i32) -> i32| (0..n).map(|i| f(i).to_string()).collect::<Vec<_>>().join(",");
    let text = format!(
        "--grid 235 --block 256\n--arg buf:a={}\n--arg buf:b=i32:{}\n--arg buf:out=i32[{}]\n--arg i32:{}\n",
        format_args!("i32:{}", list(&|i| i)),
        list(&|i| 100_000 + 2 * i),
        n,
        n
    );
    assert!(text.len() > 2 * 128 * 1024);
    let at = format!("@{}", write("vadd.args", &text));
    let o = vadd(&[&at, "--out", "out"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let want = format!("out = [{}]\n", list(&|i| 100_000 + 3 * i).replace(',', ", "));
    assert!(stdout(&o) == want, "{}…", &stdout(&o)[..200.min(stdout(&o).len())]);
}

#[test]
fn errors_from_argument_files_name_the_file_and_line() {
    let args = write("bad.args", "--block 4\n--arg buf:a=i32:1,2\n\n--arg buf:b=i32:1,2 --arg buf:out=i32[2]\n  --arg i32:x\n");
    let o = vadd(&[&format!("@{}", args)]);
    let want = format!("{}:5: argument 4 (`i32:x`): `x` is not a value of type i32", args);
    assert!(!o.status.success() && stderr(&o).contains(&want), "{}", stderr(&o));
    // Checked against the kernel's parameters: the same place.
    let args = write("type.args", "--arg buf:a=i32:1 --arg buf:b=i32:1\n--arg buf:out=i32[1]\n--arg f32:1\n");
    let o = vadd(&[&format!("@{}", args)]);
    let want = format!("{}:3: argument 4 (`f32:1`) is f32, but parameter `n` of `vadd` is i32", args);
    assert!(!o.status.success() && stderr(&o).contains(&want), "{}", stderr(&o));
    // A long list is quoted by its start.
    let long = format!("--arg buf:a=i32:{}x", "1,".repeat(1000));
    let o = vadd(&[&format!("@{}", write("long.args", &long))]);
    let want = format!("long.args:1: argument 1 (`buf:a=i32:{}…`): `x` is not a value of type i32", "1,".repeat(35));
    assert!(stderr(&o).contains(&want), "{}", stderr(&o));
    // Arguments from the command line have no place.
    let o = vadd(&["--arg", "buf:a=i32:1", "--arg", "buf:b=i32:1", "--arg", "buf:out=i32[1]", "--arg", "f32:1"]);
    assert!(stderr(&o).contains("error: argument 4 (`f32:1`) is f32"), "{}", stderr(&o));
    // An option the parser does not know.
    let args = write("option.args", "--arg i32:1\n--gird 2\n");
    let o = vadd(&[&format!("@{}", args)]);
    assert!(!o.status.success() && stderr(&o).contains(&format!("note: `--gird` comes from {}:2", args)), "{}", stderr(&o));
    // A file that cannot be read, or is not text.
    let missing = tmp("missing.args");
    let o = vadd(&[&format!("@{}", missing.display())]);
    assert!(stderr(&o).contains(&format!("error: @{}: No such file or directory", missing.display())), "{}", stderr(&o));
    let bin = write_bytes("bin.args", b"--block 4\n--arg \xff\n");
    let o = vadd(&[&format!("@{}", bin)]);
    assert!(stderr(&o).contains(&format!("error: @{}:2: not UTF-8 text (byte 7 of the line)", bin)), "{}", stderr(&o));
}
