//! `ursa compile` and `ursa test` refuse CLIF naming a huge entity number
//! (`block3000000000`) with an error at once, instead of letting
//! cranelift-reader create three billion blocks (minutes, gigabytes). Found
//! by the `clif` fuzz target.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn ursa_within(args: &[&str], limit: Duration) -> (bool, String) {
    let mut child =
        Command::new(env!("CARGO_BIN_EXE_ursa")).args(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("run ursa");
    let t0 = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait for ursa") {
            let out = child.wait_with_output().expect("ursa output");
            let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
            return (status.success(), text);
        }
        if t0.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("ursa {:?} still running after {:?}", args, limit);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn huge_block_and_slot_numbers_are_refused_quickly() {
    let dir = std::env::temp_dir().join(format!("ursa-clif-limits-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (name, body) in [
        ("block.clif", "test run\nfunction %f(i32) -> i32 {\nblock0(v0: i32):\n    jump block3000000000\nblock3000000000:\n    return v0\n}\n; run: %f(1) == 1\n"),
        ("slot.clif", "test run\nfunction %f(i32) -> i32 {\n    ss3000000000 = explicit_slot 8\nblock0(v0: i32):\n    return v0\n}\n; run: %f(1) == 1\n"),
    ] {
        let p = dir.join(name);
        std::fs::write(&p, body).unwrap();
        let ps = p.to_str().unwrap();
        let o = dir.join("out.o");
        let (ok, text) = ursa_within(&["compile", ps, "-o", o.to_str().unwrap()], Duration::from_secs(20));
        assert!(!ok, "{}", text);
        assert!(text.contains("entity numbers above 1000000 are not supported"), "{}", text);
        let (ok, text) = ursa_within(&["test", ps], Duration::from_secs(20));
        assert!(!ok, "{}", text);
        assert!(text.contains(&format!("{}: line ", ps)), "{}", text);
    }
}
