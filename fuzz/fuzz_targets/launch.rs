//! Launch-argument parsing (`ursa run`): grid, block, then one --arg spec per line. The property is `ursa_cli::fuzz_props::launch_args`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ursa_cli::fuzz_props::launch_args(data);
});
