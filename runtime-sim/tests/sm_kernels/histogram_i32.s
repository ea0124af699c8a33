// examples/kernels/histogram_i32.clif compiled by `ursa compile --kernel` at 3fc04d4 and disassembled:
// fixed code for tests/sm_pinned.rs (the simulator's figures, not the compiler's).
.kernel histogram_i32
    .param v0, 8
    .param v1, 8
    .param v2, 4
    .shared 64
    S2R R0, SR_TID_X &stall=1 &wsb=0 ;                           // 0000
    S2R R1, SR_CTAID_X &stall=1 &wsb=1 ;                         // 0010
    ISETP.LT.AND.U32 P0, R0, 0x10, PT &stall=4 &req=1 ;          // 0020
    @P0 IMAD.U32 R2, R0, 0x4, RZ &stall=5 ;                      // 0030
    @P0 STS [R2], RZ &stall=1 ;                                  // 0040
    BSSY B0, .L_150 &stall=1 ;                                   // 0050
    IMAD R1, R1, c[0x0][0x0], R0 &stall=5 &req=2 ;               // 0060
    BAR.SYNC 0x0 &stall=1 ;                                      // 0070
    ISETP.LT.AND P0, R1, c[0x0][0x170], PT &stall=4 &req=2 ;     // 0080
    @!P0 BRA .L_150 &stall=1 ;                                   // 0090
    MOV R2, 0x4 &stall=4 ;                                       // 00a0
    IMAD.WIDE R[2:3], R1, R2, c[0x0][0x160] &stall=5 &req=2 ;    // 00b0
    LDG R1, [R[2:3]] &stall=1 &wsb=0 ;                           // 00c0
    MOV R2, 0x0 &stall=1 ;                                       // 00d0
    LOP3 R1, R1, 0xf, RZ, 0xc0, !PT &stall=1 &req=1 ;            // 00e0
    MOV R3, 0x10000 &stall=4 ;                                   // 00f0
    IMAD.WIDE.U32 R[2:3], R1, 0x4, R[2:3] &stall=1 ;             // 0100
    MOV R1, 0x1 &stall=1 ;                                       // 0110
    MEMBAR.GPU &stall=3 ;                                        // 0120
    ATOM.ADD.U32 RZ, [R[2:3]], R1 &stall=1 &wsb=0 ;              // 0130
    MEMBAR.GPU &stall=1 ;                                        // 0140
.L_150:
    BSYNC B0 &stall=1 &req=2 ;                                   // 0150
    BAR.SYNC 0x0 &stall=1 &req=2 ;                               // 0160
    ISETP.LT.AND.U32 P0, R0, 0x10, PT &stall=4 ;                 // 0170
    @!P0 EXIT &stall=1 &req=2 ;                                  // 0180
    IMAD.U32 R1, R0, 0x4, RZ &stall=1 &req=2 ;                   // 0190
    MOV R2, 0x4 &stall=4 ;                                       // 01a0
    LDS R1, [R1] &stall=1 &wsb=0 ;                               // 01b0
    IMAD.WIDE.U32 R[2:3], R0, R2, c[0x0][0x168] &stall=1 ;       // 01c0
    MEMBAR.GPU &stall=4 ;                                        // 01d0
    ATOM.ADD.U32 RZ, [R[2:3]], R1 &stall=1 &wsb=0 &req=1 ;       // 01e0
    MEMBAR.GPU &stall=1 ;                                        // 01f0
    EXIT &stall=1 ;                                              // 0200
