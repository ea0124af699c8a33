// examples/kernels/matmul_i32.clif compiled by `ursa compile --kernel` at 3fc04d4 and disassembled:
// fixed code for tests/sm_pinned.rs (the simulator's figures, not the compiler's).
.kernel matmul_i32
    .param v0, 8
    .param v1, 8
    .param v2, 8
    .param v3, 4
    S2R R0, SR_TID_Y &stall=1 &wsb=0 ;                           // 0000
    S2R R1, SR_CTAID_Y &stall=1 &wsb=0 ;                         // 0010
    S2R R2, SR_TID_X &stall=1 &wsb=1 ;                           // 0020
    S2R R3, SR_CTAID_X &stall=1 &wsb=1 ;                         // 0030
    MOV.64 R[4:5], c[0x0][0x160] &stall=1 ;                      // 0040
    MOV.64 R[6:7], c[0x0][0x168] &stall=1 ;                      // 0050
    UMOV UR0, c[0x0][0x178] &stall=1 ;                           // 0060
    IMAD R0, R1, c[0x0][0x4], R0 &stall=1 &req=1 ;               // 0070
    IMAD R1, R3, c[0x0][0x0], R2 &stall=4 &req=2 ;               // 0080
    ISETP.LT.AND P0, R0, c[0x0][0x178], PT &stall=4 ;            // 0090
    ISETP.LT.AND P0, R1, c[0x0][0x178], P0 &stall=4 ;            // 00a0
    @!P0 EXIT &stall=1 ;                                         // 00b0
    MOV R2, 0x0 &stall=1 ;                                       // 00c0
    UISETP.GT.AND UP0, UR0, URZ, UPT &stall=3 ;                  // 00d0
    @!UP0 UBRA .L_490 &stall=1 ;                                 // 00e0
    UIADD UR1, UR0, -0x3 &stall=1 ;                              // 00f0
    UISETP.GE.AND UP0, UR0, -0x7ffffffd, UPT &stall=2 ;          // 0100
    USEL UR0, UR1, -0x80000000, UP0 &stall=2 ;                   // 0110
    ISETP.LT.AND P0, R2, UR0, PT &stall=4 ;                      // 0120
    @!P0 BRA .L_160 &stall=1 ;                                   // 0130
    MOV R3, R2 &stall=4 ;                                        // 0140
    BRA .L_180 &stall=1 ;                                        // 0150
.L_160:
    MOV R3, R2 &stall=4 ;                                        // 0160
    BRA .L_3e0 &stall=1 ;                                        // 0170
.L_180:
    IMAD R8, R0, c[0x0][0x178], R2 &stall=1 ;                    // 0180
    IMAD R9, R2, c[0x0][0x178], R1 &stall=1 ;                    // 0190
    IADD R2, R2, 0x1 &stall=3 ;                                  // 01a0
    IMAD.WIDE R[10:11], R8, 0x4, R[4:5] &stall=1 ;               // 01b0
    IMAD.WIDE R[8:9], R9, 0x4, R[6:7] &stall=1 ;                 // 01c0
    IMAD R12, R0, c[0x0][0x178], R2 &stall=1 ;                   // 01d0
    IMAD R13, R2, c[0x0][0x178], R1 &stall=1 ;                   // 01e0
    IADD R2, R2, 0x1 &stall=1 ;                                  // 01f0
    LDG R10, [R[10:11]] &stall=1 &wsb=0 ;                        // 0200
    LDG R8, [R[8:9]] &stall=1 &wsb=0 ;                           // 0210
    IMAD.WIDE R[14:15], R12, 0x4, R[4:5] &stall=1 ;              // 0220
    IMAD.WIDE R[12:13], R13, 0x4, R[6:7] &stall=1 ;              // 0230
    IMAD R9, R0, c[0x0][0x178], R2 &stall=1 ;                    // 0240
    IMAD R11, R2, c[0x0][0x178], R1 &stall=1 ;                   // 0250
    IADD R2, R2, 0x1 &stall=1 ;                                  // 0260
    LDG R14, [R[14:15]] &stall=1 &wsb=1 ;                        // 0270
    LDG R12, [R[12:13]] &stall=1 &wsb=1 ;                        // 0280
    IMAD.WIDE R[16:17], R9, 0x4, R[4:5] &stall=1 ;               // 0290
    IMAD.WIDE R[18:19], R11, 0x4, R[6:7] &stall=1 ;              // 02a0
    IMAD R9, R0, c[0x0][0x178], R2 &stall=1 ;                    // 02b0
    IMAD R3, R10, R8, R3 &stall=1 &req=1 ;                       // 02c0
    IMAD R8, R2, c[0x0][0x178], R1 &stall=1 ;                    // 02d0
    LDG R10, [R[16:17]] &stall=1 &wsb=0 ;                        // 02e0
    LDG R11, [R[18:19]] &stall=1 &wsb=0 ;                        // 02f0
    IMAD.WIDE R[16:17], R9, 0x4, R[4:5] &stall=1 ;               // 0300
    IADD R2, R2, 0x1 &stall=1 ;                                  // 0310
    IMAD.WIDE R[8:9], R8, 0x4, R[6:7] &stall=1 ;                 // 0320
    IMAD R3, R14, R12, R3 &stall=2 &req=2 ;                      // 0330
    LDG R12, [R[16:17]] &stall=1 &wsb=1 ;                        // 0340
    ISETP.LT.AND P0, R2, UR0, PT &stall=1 ;                      // 0350
    LDG R8, [R[8:9]] &stall=1 &wsb=1 ;                           // 0360
    IMAD R3, R10, R11, R3 &stall=5 &req=1 ;                      // 0370
    IMAD R3, R12, R8, R3 &stall=5 &req=2 ;                       // 0380
    @P0 BRA .L_180 &stall=1 &yield=1 ;                           // 0390
    ISETP.LT.AND P0, R2, c[0x0][0x178], PT &stall=4 ;            // 03a0
    @P0 BRA .L_3e0 &stall=1 ;                                    // 03b0
    MOV R2, R3 &stall=4 ;                                        // 03c0
    BRA .L_490 &stall=1 ;                                        // 03d0
.L_3e0:
    IMAD R8, R0, c[0x0][0x178], R2 &stall=1 ;                    // 03e0
    IMAD R9, R2, c[0x0][0x178], R1 &stall=1 ;                    // 03f0
    IADD R2, R2, 0x1 &stall=3 ;                                  // 0400
    IMAD.WIDE R[10:11], R8, 0x4, R[4:5] &stall=1 ;               // 0410
    IMAD.WIDE R[8:9], R9, 0x4, R[6:7] &stall=1 ;                 // 0420
    ISETP.LT.AND P0, R2, c[0x0][0x178], PT &stall=3 ;            // 0430
    LDG R10, [R[10:11]] &stall=1 &wsb=0 ;                        // 0440
    LDG R8, [R[8:9]] &stall=1 &wsb=0 ;                           // 0450
    IMAD R3, R10, R8, R3 &stall=5 &req=1 ;                       // 0460
    @P0 BRA .L_3e0 &stall=1 &yield=1 ;                           // 0470
    MOV R2, R3 &stall=4 ;                                        // 0480
.L_490:
    IMAD R0, R0, c[0x0][0x178], R1 &stall=1 ;                    // 0490
    MOV R1, 0x4 &stall=4 ;                                       // 04a0
    IMAD.WIDE R[0:1], R0, R1, c[0x0][0x170] &stall=5 ;           // 04b0
    STG [R[0:1]], R2 &stall=1 ;                                  // 04c0
    EXIT &stall=1 ;                                              // 04d0
