//! The typed host API (`ursa_sim::host`): buffers and views as kernel
//! arguments, the checks of a launch's arguments against the `.param` table
//! (each error naming the kernel and the parameter), and launches that
//! fail or trap, as error values.

use ursa_sim::host::{Device, HostError, KernelArg};
use ursa_sim::{LaunchConfig, TrapKind};

/// `out[i] = out[i] * k + i` for `i < n`, one thread per element, with a
/// parameter of each kind: `out: ptr`, `k: i64`, `n: i32`, `pad: 4 bytes`.
const SCALE: &str = "
.kernel scale
    .param out, ptr
    .param k, i64
    .param n, i32
    .param pad, 4
    S2R R0, SR_TID_X ;
    ISETP.GE.U32.AND P0, PT, R0, c[0x0][0x170], PT ;
    @P0 EXIT ;
    MOV.64 R[2:3], c[0x0][0x160] ;
    IMAD.WIDE.U32 R[2:3], R0, 0x4, R[2:3] ;
    LDG R4, [R[2:3]] ;
    IMAD R4, R4, c[0x0][0x168], R0 ;
    STG [R[2:3]], R4 ;
    EXIT ;
";

fn object(src: &str) -> Vec<u8> {
    ursa_emit::elf::write(&ursa_emit::asm::assemble(src, "test.s").unwrap_or_else(|e| panic!("{}", e)))
}

#[test]
fn a_view_passes_the_address_of_its_first_element() {
    let dev = Device::new();
    let scale = dev.load_module(&object(SCALE)).unwrap().kernel("scale").unwrap();
    let buf = dev.buffer_from(&[1i32, 1, 1, 1, 1, 1]).unwrap();
    let mid = buf.slice(2..5).unwrap();
    scale.launch(1, 32, 0, &[&mid, &10i64, &3i32, &KernelArg::bytes([0; 4])]).unwrap();
    assert_eq!(buf.to_vec().unwrap(), [1, 1, 10, 11, 12, 1]);
    // A view of a view, dropped before the buffer: the memory stays.
    let last = mid.slice(2..).unwrap();
    drop(mid);
    scale.launch(1, 32, 0, &[&last, &2i64, &1i32, &0u32]).unwrap();
    assert_eq!(buf.to_vec().unwrap(), [1, 1, 10, 11, 24, 1]);
}

#[test]
fn a_zero_length_buffer_is_an_argument_like_any_other() {
    let dev = Device::new();
    let scale = dev.load_module(&object(SCALE)).unwrap().kernel("scale").unwrap();
    let empty = dev.alloc_zeros::<i32>(0).unwrap();
    assert!(empty.is_empty() && empty.to_vec().unwrap().is_empty());
    scale.launch(1, 32, 0, &[&empty, &1i64, &0i32, &0f32]).unwrap();
}

#[test]
fn arguments_are_checked_naming_the_kernel_and_the_parameter() {
    let dev = Device::new();
    let scale = dev.load_module(&object(SCALE)).unwrap().kernel("scale").unwrap();
    let out = dev.buffer_from(&[5i32]).unwrap();
    let other = Device::new().alloc_zeros::<i32>(1).unwrap();
    let err = |args: &[&dyn ursa_sim::host::AsKernelArg]| scale.launch(1, 1, 0, args).unwrap_err().to_string();
    assert_eq!(err(&[&out, &1i64]), "kernel `scale` takes 4 arguments (out (ptr), k (i64), n (i32), pad (4 bytes)), 2 given");
    assert_eq!(err(&[&out, &1i32, &1i32, &0i32]), "argument 2 is i32, but parameter `k` of kernel `scale` is i64");
    assert_eq!(err(&[&out, &1f64, &1i32, &0i32]), "argument 2 is f64, but parameter `k` of kernel `scale` is i64");
    assert_eq!(err(&[&out, &1i64, &out, &0i32]), "argument 3 is a buffer (a pointer), but parameter `n` of kernel `scale` is i32");
    assert_eq!(err(&[&out, &1i64, &1i32, &0u8]), "argument 4 is i8, but parameter `pad` of kernel `scale` is 4 bytes");
    assert_eq!(err(&[&other, &1i64, &1i32, &0i32]), "argument 1 of kernel `scale` is a buffer of another device");
    // A buffer stands for an i64 (CLIF's pointers), an i64 for a pointer.
    scale.launch(1, 1, 0, &[&(out.address() as i64), &out, &1i32, &0i32]).unwrap();
    assert_ne!(out.to_vec().unwrap(), [5], "the launch ran");
    match scale.launch(1, 1, 0, &[&out, &1i32, &1i32, &0i32]) {
        Err(HostError::ArgumentType { kernel, index: 2, param, given }) => {
            assert_eq!((kernel.as_str(), param.name.as_str(), given.as_str()), ("scale", "k", "i32"))
        }
        other => panic!("{:?}", other),
    }
}

#[test]
fn a_kernel_without_a_parameter_table_takes_its_arguments_in_order() {
    // `out[0] = x` with `x` at 0x168, after the 8-byte pointer.
    let src = ".kernel k\n    MOV.64 R[2:3], c[0x0][0x160] ;\n    MOV R4, c[0x0][0x168] ;\n    STG [R[2:3]], R4 ;\n    EXIT ;\n";
    let dev = Device::new();
    let k = dev.load_module(&object(src)).unwrap().kernel("k").unwrap();
    let out = dev.alloc_zeros::<u32>(1).unwrap();
    k.launch(1, 1, 0, &[&out, &0xabcdu32]).unwrap();
    assert_eq!(out.to_vec().unwrap(), [0xabcd]);
}

#[test]
fn failed_launches_are_error_values() {
    let dev = Device::new();
    let module = dev.load_module(&object(SCALE)).unwrap();
    let scale = module.kernel("scale").unwrap();
    let out = dev.buffer_from(&[5i32]).unwrap();
    let args: [&dyn ursa_sim::host::AsKernelArg; 4] = [&out, &1i64, &2i32, &0i32];
    // A configuration the device refuses.
    match scale.launch(1, 2048, 0, &args) {
        Err(e @ HostError::Trap { .. }) => assert!(e.to_string().starts_with("bad launch: a CTA must have 1 to 1024 threads"), "{}", e),
        other => panic!("{:?}", other),
    }
    // A trap: lane 1 stores past the one-element buffer. Without a profile
    // asked for, no partial launch comes with it.
    match scale.launch(1, 2, 0, &args) {
        Err(HostError::Trap { trap, before: None }) => assert!(matches!(trap.kind, TrapKind::OutOfBounds { .. }), "{}", trap),
        other => panic!("{:?}", other),
    }
    let cfg = LaunchConfig { block: [2, 1, 1], timeline: true, ..Default::default() };
    match scale.launch_with(&cfg, &args) {
        Err(HostError::Trap { trap, before: Some(launch) }) => {
            assert_eq!(launch.trap(), Some(&*trap));
            let mut json = Vec::new();
            assert!(launch.write_timeline(&mut json).unwrap());
            assert!(String::from_utf8(json).unwrap().contains("\"trap\":\"trap: out-of-bounds global access"));
        }
        other => panic!("{:?}", other),
    }
    assert!(matches!(module.kernel("nope"), Err(HostError::NoKernel { .. })));
    assert!(matches!(dev.load_module(&[0x7f, b'E', b'L', b'F']), Err(HostError::Load(_))));
}

#[test]
fn devices_are_shared_between_threads() {
    let dev = Device::new();
    let scale = dev.load_module(&object(SCALE)).unwrap().kernel("scale").unwrap();
    let bufs: Vec<_> = (0..4).map(|i| dev.buffer_from(&[i; 8]).unwrap()).collect();
    std::thread::scope(|s| {
        for (i, b) in bufs.iter().enumerate() {
            let scale = scale.clone();
            s.spawn(move || scale.launch(1, 8, 0, &[b, &(i as i64), &8i32, &0i32]).unwrap());
        }
    });
    for (i, b) in bufs.iter().enumerate() {
        let i = i as i32;
        assert_eq!(b.to_vec().unwrap(), (0..8).map(|t| i * i + t).collect::<Vec<_>>());
    }
}
