// examples/kernels/block_reduce_i32.clif compiled by `ursa compile --kernel` at 3fc04d4 and disassembled:
// fixed code for tests/sm_pinned.rs (the simulator's figures, not the compiler's).
.kernel block_reduce_i32
    .param v0, 8
    .param v1, 8
    .param v2, 4
    .shared 1024
    S2R R0, SR_TID_X &stall=1 &wsb=0 ;                           // 0000
    S2R R1, SR_CTAID_X &stall=1 &wsb=0 ;                         // 0010
    IMAD R2, R1, c[0x0][0x0], R0 &stall=5 &req=1 ;               // 0020
    ISETP.LT.AND P0, R2, c[0x0][0x170], PT &stall=4 ;            // 0030
    @P0 MOV R3, 0x4 &stall=4 ;                                   // 0040
    @P0 IMAD.WIDE R[2:3], R2, R3, c[0x0][0x160] &stall=5 ;       // 0050
    @P0 LDG R2, [R[2:3]] &stall=1 &wsb=0 ;                       // 0060
    SEL R2, R2, RZ, P0 &stall=4 &req=1 ;                         // 0070
    IMAD.U32 R3, R0, 0x4, RZ &stall=5 ;                          // 0080
    STS [R3], R2 &stall=1 ;                                      // 0090
    BAR.SYNC 0x0 &stall=1 ;                                      // 00a0
    UMOV UR0, 0x80 &stall=2 ;                                    // 00b0
.L_c0:
    ISETP.LT.AND.U32 P0, R0, UR0, PT &stall=4 ;                  // 00c0
    @P0 IADD R2, R0, UR0 &stall=1 ;                              // 00d0
    @P0 LDS R4, [R3] &stall=3 &wsb=0 ;                           // 00e0
    @P0 IMAD.U32 R2, R2, 0x4, RZ &stall=5 ;                      // 00f0
    @P0 LDS R2, [R2] &stall=1 &wsb=0 ;                           // 0100
    @P0 IADD R2, R4, R2 &stall=4 &req=1 ;                        // 0110
    @P0 STS [R3], R2 &stall=1 ;                                  // 0120
    BAR.SYNC 0x0 &stall=1 ;                                      // 0130
    UISETP.GT.AND.U32 UP0, UR0, 0x1, UPT &stall=1 ;              // 0140
    USHF.R.WRAP.U32 UR0, UR0, 0x1, URZ &stall=2 ;                // 0150
    @UP0 UBRA .L_c0 &stall=1 &yield=1 ;                          // 0160
    ISETP.EQ.AND.U32 P0, R0, RZ, PT &stall=4 ;                   // 0170
    @!P0 EXIT &stall=1 ;                                         // 0180
    LDS R0, [RZ] &stall=1 &wsb=0 ;                               // 0190
    MOV R2, 0x4 &stall=4 ;                                       // 01a0
    IMAD.WIDE.U32 R[2:3], R1, R2, c[0x0][0x168] &stall=5 ;       // 01b0
    STG [R[2:3]], R0 &stall=1 &req=1 ;                           // 01c0
    EXIT &stall=1 ;                                              // 01d0
