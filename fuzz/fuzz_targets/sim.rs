//! The simulator on random but decodable instruction streams. The property is `ursa_cli::fuzz_props::sim_stream`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ursa_cli::fuzz_props::sim_stream(data);
});
