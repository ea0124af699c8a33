//! A generated kernel, its seed from the input, run differentially
//! (`ursa fuzz --kernels`). The property is `ursa_cli::fuzz_props::kernel_seed`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ursa_cli::fuzz_props::kernel_seed(data);
});
