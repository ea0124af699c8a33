//! Assembly text and objects that must be refused with a clear error (issue 12):
//! nothing the assembler accepts or the disassembler prints may fail to
//! round-trip.

use ursa_emit::asm::{assemble, disassemble};
use ursa_emit::elf::{Function, Object, Reloc};
use ursa_emit::text::parse_int;
use ursa_emit::{format_inst, parse_inst, NoLabels};

fn asm_err(src: &str) -> String {
    assemble(src, "t.s").map(|o| format!("accepted: {:?}", o)).unwrap_or_else(|e| e.to_string())
}

#[test]
fn branch_offsets_must_be_whole_instructions() {
    let e = asm_err(".kernel k\n BRA 0x5 ;\n EXIT ;\n");
    assert!(e.contains("not on an instruction boundary"), "{}", e);
    // A whole-instruction offset inside the function is fine.
    assert!(assemble(".kernel k\n BRA 0x0 ;\n EXIT ;\n", "t.s").is_ok());
}

#[test]
fn branch_targets_must_be_in_the_function() {
    let e = asm_err(".kernel k\n BRA 0x10 ;\n EXIT ;\n");
    assert!(e.contains("outside function `k`"), "{}", e);
    let e = asm_err(".kernel k\n BRA -0x40 ;\n EXIT ;\n");
    assert!(e.contains("outside function `k`"), "{}", e);
}

#[test]
fn underscore_numbers_are_names() {
    assert_eq!(parse_int("_90"), None);
    assert_eq!(parse_int("0x_1"), None);
    assert_eq!(parse_int("1_000"), Some(1000));
    assert_eq!(parse_int("0xffff_ffff"), Some(0xffff_ffff));
    // `_90` is a label: the branch goes to it, not 90 bytes ahead.
    let obj = assemble(".kernel k\n_90:\n BRA _90 ;\n EXIT ;\n", "t.s").unwrap();
    let text = disassemble(&obj).unwrap();
    assert!(text.contains("BRA .L_0"), "{}", text);
    let e = asm_err(".kernel k\n BRA _90 ;\n EXIT ;\n");
    assert!(e.contains("undefined label `_90`"), "{}", e);
}

#[test]
fn file_named_with_a_digit_gives_a_kernel_that_reassembles() {
    let obj = assemble("EXIT ;\n", "dir/1.s").unwrap();
    assert_eq!(obj.functions[0].name, "_1");
    let text = disassemble(&obj).unwrap();
    assert_eq!(assemble(&text, "x.s").unwrap(), obj);
}

fn msg(text: &str) -> String {
    match parse_inst(text, 1, None, &NoLabels) {
        Ok(i) => format!("accepted: {}", format_inst(&i, None, &NoLabels).unwrap()),
        Err(e) => e.msg,
    }
}

#[test]
fn out_of_range_immediates_say_so() {
    let e = msg("IADD R0, R1, 0x123456789012");
    assert!(e.contains("does not fit"), "{}", e);
    let e = msg("DADD R[0:1], R[2:3], 1e300");
    assert!(e.contains("out of range"), "{}", e);
    let e = msg("DADD R[0:1], R[2:3], 1e400");
    assert!(e.contains("out of range"), "{}", e);
    let e = msg("FADD R0, R1, 1e40");
    assert!(e.contains("out of range"), "{}", e);
    // Infinities written as such are fine.
    assert!(msg("DADD R[0:1], R[2:3], +INF").starts_with("accepted"));
    assert!(msg("FADD R0, R1, -INF").starts_with("accepted"));
}

fn one_fn(code: Vec<u8>, relocs: Vec<Reloc>) -> Object {
    Object { functions: vec![Function { name: "f".into(), kernel: false, code, relocs, ..Default::default() }], ..Default::default() }
}

fn code_of(src: &str) -> Vec<u8> {
    assemble(src, "t.s").unwrap().functions.remove(0).code
}

#[test]
fn disasm_refuses_what_does_not_reassemble() {
    // Empty function.
    let e = disassemble(&one_fn(vec![], vec![])).unwrap_err().to_string();
    assert!(e.contains("no instructions"), "{}", e);
    // Branch target outside the function: a branch to itself, patched to +0x100.
    let mut code = code_of(".func f\n BRA -0x10 ;\n");
    let inst = ursa_emit::Inst::decode(&code[..16].try_into().unwrap()).unwrap();
    let fi = inst.def().fields.iter().position(|f| f.kind == ursa_emit::model::Kind::PCRel32).unwrap();
    let lo = inst.def().fields[fi].lo as usize / 8;
    code[lo..lo + 4].copy_from_slice(&0x100u32.to_le_bytes());
    let e = disassemble(&one_fn(code.clone(), vec![])).unwrap_err().to_string();
    assert!(e.contains("not an instruction of the function"), "{}", e);
    // A garbage relocation symbol on a CALL.
    let mut obj = assemble(".func f\n CALL R[20:21], g ;\n RET R[20:21] ;\n.func g\n RET R[20:21] ;\n", "t.s").unwrap();
    obj.functions[0].relocs[0].symbol = "\u{1}bad sym".into();
    let e = disassemble(&obj).unwrap_err().to_string();
    assert!(e.contains("not a function name"), "{}", e);
    obj.functions[0].relocs[0].symbol = "nowhere".into();
    let e = disassemble(&obj).unwrap_err().to_string();
    assert!(e.contains("does not define"), "{}", e);
    // A relocation that patches no call target.
    obj.functions[0].relocs[0].symbol = "g".into();
    obj.functions[0].relocs[0].offset = 0;
    let e = disassemble(&obj).unwrap_err().to_string();
    assert!(e.contains("does not patch"), "{}", e);
    // A name assembly cannot hold.
    let mut obj = assemble(".func f\n RET R[20:21] ;\n", "t.s").unwrap();
    obj.functions[0].name = "1".into();
    assert!(disassemble(&obj).unwrap_err().to_string().contains("cannot be written"));
    // Two functions with one name.
    let mut obj = assemble(".func f\n RET R[20:21] ;\n.func g\n RET R[20:21] ;\n", "t.s").unwrap();
    obj.functions[1].name = "f".into();
    assert!(disassemble(&obj).unwrap_err().to_string().contains("defined twice"));
}

/// Issue 25, item 4: `.param` offsets wrapped at 2^32 (a parameter placed at
/// offset 0, over another), and a duplicate `.param` name and a repeated
/// `.local` or `.shared` were taken (the last one won).
#[test]
fn parameter_and_size_directives_are_checked() {
    for (body, want) in [
        (
            ".param a, 8\n.param b, 0xfffffff8\n.param c, 4",
            "t.s:3:1: parameter `b`: a parameter of 4294967288 bytes at offset 8 ends past the 65184 bytes constant bank 0 has for parameters",
        ),
        (".param a, 65180\n.param b, 8", "t.s:3:1: parameter `b`: a parameter of 8 bytes at offset 65184 ends past"),
        (".param a, 4\n.param a, 8", "t.s:3:1: parameter `a` is declared twice"),
        (".param a+b, 4", "t.s:2:1: bad parameter name `a+b`"),
        (".local 16\n.local 32", "t.s:3:1: `.local` is given twice for `k`"),
        (".shared 16\n.shared 16", "t.s:3:1: `.shared` is given twice for `k`"),
    ] {
        let e = asm_err(&format!(".kernel k\n{}\n EXIT ;\n", body));
        assert!(e.contains(want), "{}: {}", body, e);
    }
    // The largest table that fits is fine.
    let obj = assemble(".kernel k\n.param a, 65180\n.param b, 4\n EXIT ;\n", "t.s").unwrap();
    assert_eq!(obj.functions[0].params[1].offset, 65180);
}

/// Issue 25, item 5: an object whose parameter offset or count is out of
/// the parameter block is refused when read (a launch took 12-18 s and
/// 8.4 GB before saying it did not fit).
#[test]
fn objects_with_parameters_past_the_bank_are_refused() {
    let with = |params: Vec<ursa_emit::elf::Param>| {
        let f = Function { name: "k".into(), kernel: true, code: vec![0; 16], params, ..Default::default() };
        ursa_emit::elf::read(&ursa_emit::elf::write(&Object { functions: vec![f], ..Default::default() }))
            .map(|_| ())
            .map_err(|e| e.to_string())
    };
    let p = |offset: u32, size: u32| ursa_emit::elf::Param { name: "x".into(), offset, size, kind: Default::default() };
    assert_eq!(with(vec![p(0, 4), p(65180, 4)]), Ok(()));
    let e = with(vec![p(0xfffffff0, 4)]).unwrap_err().to_string();
    assert!(e.contains("function `k`, parameter `x`: a parameter of 4 bytes at offset 4294967280 ends past"), "{}", e);
    assert!(with(vec![p(65184, 1)]).is_err());
    assert!(with(vec![p(8, 0)]).unwrap_err().contains("a parameter of 0 bytes"));
}
