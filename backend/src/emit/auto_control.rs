//! `ursa asm --auto-control`: assembly text whose control bits are filled by
//! the compiler's own `calc_instr_deps`, so hand-written or translated
//! code (the ptxas translations of `../shared/anchors/ptxas-ursa`) runs
//! under the same control-bit policy as the compiler's output.
//!
//! Each function of the file becomes a [`Code`]: blocks start at the first
//! instruction, at every label and at every branch target; a branch to a
//! label of the function is an edge, one to another function a jump out.
//! The bits of the input (`&stall`, `&yield`, `&wsb`, `&req`) are dropped,
//! the pass fills them, and the text comes back line by line: labels,
//! directives, blank lines and comments as they were, each instruction as
//! written with its new bits, NOPs the pass inserts on lines of their own.

use std::cell::Cell;
use std::collections::HashMap;

use ursa_emit::model::Kind;
use ursa_emit::{format_inst, optypes, parse_inst, Labels, NoLabels};
use ursa_isel::vcode::BlockId;

use crate::emit::calc_instr_deps::calc_instr_deps_at;
use crate::ir::code::{Code, Item};

const INST_BYTES: usize = 16;

/// One instruction line of the input.
struct Line<'a> {
    /// Index into the input's lines.
    no: usize,
    /// The instruction without its control bits and `;`.
    text: String,
    /// The line before the instruction's first character (indentation,
    /// labels on the same line).
    lead: &'a str,
    /// `// ...` to the end of the line, if any.
    comment: Option<&'a str>,
    /// Where the comment started.
    comment_col: usize,
}

#[derive(Default)]
struct Func<'a> {
    lines: Vec<Line<'a>>,
    labels: HashMap<String, usize>,
}

/// Labels of one function for the parser: local labels at their
/// instruction's address; another function's name is a jump or call out.
struct FnLabels<'a> {
    local: &'a HashMap<String, usize>,
    functions: &'a [String],
    external: Cell<bool>,
}

impl Labels for FnLabels<'_> {
    fn address(&self, name: &str) -> Option<u64> {
        if let Some(&i) = self.local.get(name) {
            return Some((i * INST_BYTES) as u64);
        }
        self.functions.iter().any(|f| f == name).then(|| {
            self.external.set(true);
            0
        })
    }
    fn name(&self, _: u64) -> Option<String> {
        None
    }
}

/// The instruction text of `code` (before `//`) without its control bits
/// (`&name=value` words) and its `;`.
fn strip_controls(code: &str) -> String {
    let code = code.trim().trim_end_matches(';').trim_end();
    code.split_whitespace().filter(|w| !w.starts_with('&')).collect::<Vec<_>>().join(" ")
}

/// The control bits of an instruction as assembly text (` &stall=4 &wsb=0`,
/// defaults omitted, as the formatter writes them).
fn controls_text(i: &ursa_emit::Inst) -> Result<String, String> {
    let text = format_inst(i, None, &NoLabels).map_err(|e| e.to_string())?;
    let text = text.trim_end_matches(" ;");
    Ok(text.find(" &").map(|at| text[at..].to_string()).unwrap_or_default())
}

/// `text` (a whole assembly file, `file_name` for errors) with every
/// instruction's control bits replaced by those `calc_instr_deps` computes.
pub fn auto_control(text: &str, file_name: &str) -> Result<String, String> {
    // The file must assemble as it is: its errors are those of `ursa asm`.
    ursa_emit::asm::assemble(text, file_name).map_err(|e| e.to_string())?;
    let src: Vec<&str> = text.lines().collect();
    let mut funcs: Vec<Func> = Vec::new();
    let mut names: Vec<String> = Vec::new();
    for (no, raw) in src.iter().enumerate() {
        let (code, comment) = match raw.find("//") {
            Some(c) => (&raw[..c], Some((&raw[c..], c))),
            None => (*raw, None),
        };
        let mut rest = code.trim_start();
        // Labels.
        while let Some(c) = rest.find(':') {
            let name = rest[..c].trim();
            if name.is_empty() || name.contains(char::is_whitespace) || name.contains('[') {
                break;
            }
            if funcs.is_empty() {
                funcs.push(Func::default());
            }
            let f = funcs.last_mut().expect("pushed above");
            f.labels.insert(name.to_string(), f.lines.len());
            rest = rest[c + 1..].trim_start();
        }
        let rest_t = rest.trim_end();
        if rest_t.is_empty() {
            continue;
        }
        if let Some(d) = rest_t.strip_prefix('.') {
            let (kw, args) = d.split_once(char::is_whitespace).unwrap_or((d, ""));
            if kw == "kernel" || kw == "func" {
                funcs.push(Func::default());
                names.push(args.trim().to_string());
            }
            continue;
        }
        if funcs.is_empty() {
            funcs.push(Func::default());
        }
        let lead = &code[..code.len() - rest.len()];
        let (comment, comment_col) = comment.map_or((None, 0), |(c, col)| (Some(c), col));
        funcs.last_mut().expect("pushed above").lines.push(Line { no, text: strip_controls(rest_t), lead, comment, comment_col });
    }
    // The new text of each instruction line, and NOP lines before it.
    let mut new_lines: HashMap<usize, (Vec<String>, String)> = HashMap::new();
    for f in &funcs {
        let code = refill(f, &names).map_err(|e| format!("{}: {}", file_name, e))?;
        let (mut code, nops) = code;
        let mut items = std::mem::take(&mut code.items).into_iter();
        let mut nop_at = nops.into_iter().peekable();
        for (i, l) in f.lines.iter().enumerate() {
            let mut before = Vec::new();
            while nop_at.next_if(|&k| k == i).is_some() {
                let nop = items.next().ok_or("the pass lost an instruction")?;
                let t = format_inst(&nop.inst, None, &NoLabels).map_err(|e| e.to_string())?;
                before.push(format!("{}{}", l.lead.chars().filter(|c| c.is_whitespace()).collect::<String>(), t));
            }
            let it = items.next().ok_or("the pass lost an instruction")?;
            let mut line = format!("{}{}{} ;", l.lead, l.text, controls_text(&it.inst)?);
            if let Some(c) = l.comment {
                let pad = if line.len() < l.comment_col { l.comment_col - line.len() } else { 1 };
                line.push_str(&" ".repeat(pad));
                line.push_str(c);
            }
            new_lines.insert(l.no, (before, line));
        }
    }
    let mut out = String::with_capacity(text.len() + 256);
    for (no, raw) in src.iter().enumerate() {
        match new_lines.remove(&no) {
            Some((before, line)) => {
                for b in before {
                    out.push_str(&b);
                    out.push('\n');
                }
                out.push_str(&line);
            }
            None => out.push_str(raw),
        }
        out.push('\n');
    }
    Ok(out)
}

/// One function as [`Code`], its bits filled; with the indices of the
/// instructions NOPs went before.
fn refill(f: &Func, names: &[String]) -> Result<(Code, Vec<usize>), String> {
    let mut insts = Vec::with_capacity(f.lines.len());
    // Per instruction: the index it branches to, or whether it jumps out.
    let mut targets: Vec<Option<usize>> = Vec::with_capacity(f.lines.len());
    for (i, l) in f.lines.iter().enumerate() {
        let labels = FnLabels { local: &f.labels, functions: names, external: Cell::new(false) };
        let pc = (i * INST_BYTES) as u64;
        let inst = parse_inst(&l.text, 0, Some(pc), &labels).map_err(|e| format!("line {}: {}", l.no + 1, e.msg))?;
        let op = inst.def().optype;
        let mut target = None;
        if !labels.external.get() && (op == optypes::BRA::ID || op == optypes::UBRA::ID) {
            if let Some(fi) = inst.def().fields.iter().position(|fd| fd.kind == Kind::PCRel32) {
                let to = pc as i64 + INST_BYTES as i64 + inst.get_at(fi) as u32 as i32 as i64;
                target = Some((to / INST_BYTES as i64) as usize);
            }
        }
        insts.push(inst);
        targets.push(target);
    }
    let mut starts: Vec<usize> = std::iter::once(0).chain(f.labels.values().copied()).chain(targets.iter().flatten().copied()).collect();
    starts.retain(|&s| s < insts.len());
    starts.sort_unstable();
    starts.dedup();
    let items = insts
        .into_iter()
        .zip(&targets)
        .map(|(inst, t)| {
            let it = Item::new(inst);
            match t.and_then(|t| starts.binary_search(&t).ok()) {
                Some(b) => it.to(BlockId(b as u32)),
                None => it,
            }
        })
        .collect();
    let mut code = Code { items, block_start: starts, vblocks: Vec::new(), frame_size: 0, dropped_copies: 0 };
    let nops = calc_instr_deps_at(&mut code);
    Ok((code, nops))
}

#[cfg(test)]
mod tests {
    use super::auto_control;

    #[test]
    fn bits_are_refilled_and_comments_labels_kept() {
        let src = "// a loop\n.kernel k\n    .param p, 8\n    MOV R0, RZ &stall=1 &req=63 ;   // first\n.L_1:\n    IADD R0, R0, 0x1 ;\n    ISETP.LT.AND P0, R0, 0x4, PT &stall=9 ; // cond\n    @P0 BRA .L_1 ;\n    EXIT ;\n";
        let out = auto_control(src, "k.s").unwrap();
        assert_eq!(
            out,
            "// a loop\n.kernel k\n    .param p, 8\n    MOV R0, RZ &stall=4 ;           // first\n.L_1:\n    IADD R0, R0, 0x1 &stall=4 ;\n    ISETP.LT.AND P0, R0, 0x4, PT &stall=4 ; // cond\n    @P0 BRA .L_1 &stall=1 &yield=1 ;\n    EXIT &stall=1 ;\n"
        );
        // What comes out assembles.
        ursa_emit::asm::assemble(&out, "k.s").unwrap();
    }
}
