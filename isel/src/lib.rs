//! Instruction selection: prioritized lowering rules from Cranelift IR to machine instructions with virtual registers (filled by the compiler issue).
