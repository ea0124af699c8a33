//! runtime-sim: a SIMT simulator that loads Ursa ELF binaries, decodes them with the `emit` decoder and executes them.
