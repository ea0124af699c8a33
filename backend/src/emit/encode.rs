//! The last step: branch offsets resolved, call relocations recorded, and
//! every instruction encoded with the one encoder (`ursa_emit::Inst::encode`).

use ursa_emit::elf::Reloc;
use ursa_emit::model::Kind;
use ursa_emit::{Inst, INST_BYTES};

use crate::ir::code::{inst_text, Code};
use crate::Error;

/// The branch-offset field (`PCRel32`) of a branch, call or `BSSY`.
fn target_field(i: &Inst) -> Option<usize> {
    i.def().fields.iter().position(|f| f.kind == Kind::PCRel32)
}

/// Resolves branch targets and call relocations; encodes every instruction.
pub fn encode(code: &Code) -> Result<(Vec<u8>, Vec<Reloc>), Error> {
    let mut bytes = Vec::with_capacity(code.items.len() * INST_BYTES);
    let mut relocs = Vec::new();
    for (k, it) in code.items.iter().enumerate() {
        let pc = (k * INST_BYTES) as i64;
        // Only an instruction with a block address is copied (to fill in its
        // offset); the others encode as they are.
        let patched = match it.target.or(it.label) {
            Some(t) => {
                let mut i = it.inst.clone();
                let dest = (code.block_start[t.0 as usize] * INST_BYTES) as i64;
                let f = target_field(&i).ok_or_else(|| {
                    Error::internal(format!("instruction {} has a branch target but no offset field", k)).at(inst_text(&i))
                })?;
                i.set_at(f, (dest - (pc + INST_BYTES as i64)) as u32 as u64);
                Some(i)
            }
            None => None,
        };
        let i = patched.as_ref().unwrap_or(&it.inst);
        if let Some(sym) = &it.call {
            let fi = target_field(i)
                .ok_or_else(|| Error::internal(format!("instruction {} is a call without a target field", k)).at(inst_text(i)))?;
            let fo = (i.field_def(fi).lo / 8) as u64;
            relocs.push(Reloc { offset: pc as u64 + fo, symbol: sym.clone(), addend: fo as i64 - INST_BYTES as i64 });
        }
        let b = i.encode().map_err(|e| Error::internal(format!("instruction {} does not encode: {}", k, e)).at(inst_text(i)))?;
        bytes.extend_from_slice(&b);
    }
    Ok((bytes, relocs))
}
