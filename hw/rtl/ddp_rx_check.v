// ddp_rx_check: stages H, C1 and C1b of ddp_rx's check pipeline
// (hw/rtl/ddp_rx.v has the interface and the map of the stages).
//
// H: reads the connection's check context, the STag entry and the posted
// buffer for the piece's header record (hf_fifo's head, or the record in
// the clock it is made when hf_fifo is empty and the checks move), with
// addresses taken from the header as it is (cx_rd_*, st_rd_*, rg_rd_* to
// ddp_rx_tables). C1: header classification (RFC 5041 4, 7.1; RFC 5040 4)
// with the header error (ERR_* of rnic_codes.vh) and the first clock of
// the checks' sums on what was read (sum72a on 8-bit chunks, carry-save
// for three or four operands). C1b (its registers b_*): the sums' second
// clock (sum72b), each comparison the sign of a sum (bs_*), for
// ddp_rx_decide's C2.
//
// Cycle behaviour: one piece a clock; a piece is in C1 the clock after H
// and in C1b the clock after; the pipeline moves unless C2 holds
// (c_adv from ddp_rx_decide: the descriptor queue is full).

`resetall
`timescale 1ns / 1ps
`default_nettype none

module ddp_rx_check #(
    parameter DATA_W = 64,
    parameter CONN_W = 10,
    parameter STAG_AW = 12,
    parameter RQ_AW = 3,
    parameter ADDR_W = 64,
    parameter ID_W = 32,
    parameter BURST = 8,
    parameter BQ_AW = 4
) (
    clk,
    rst,
    cx_rd_data,
    st_rd_data,
    rg_rd_data,
    h_valid,
    h_rec,
    dc_in_ready,
    c_adv,
    hf_conn,
    hf_hdr,
    hf_idx32,
    c1_valid_reg,
    p1_conn,
    b_valid_reg,
    b_conn_reg,
    b_first_reg,
    b_early_reg,
    b_cx_reg,
    b_t_reg,
    b_l_reg,
    b_op_reg,
    b_stag_reg,
    b_msn_reg,
    b_msn1_reg,
    b_qn_reg,
    b_n_reg,
    b_hlen_reg,
    b_cerr_reg,
    b_cerr_code_reg,
    b_stag_bad_reg,
    b_assoc_bad_reg,
    b_acc_reg,
    b_wrap_reg,
    b_mo_gt_reg,
    b_rr_eq_reg,
    b_z_reg,
    b_id_reg,
    b_st_reg,
    bs_lt,
    bs_gt,
    bs_dt,
    bs_du,
    bs_mon,
    bs_long,
    bs_nobuf,
    bs_behind
);
reg [ST_W-2:0] b_st_next;
reg [ID_W-1:0] b_id_next;
reg [3:0] b_z_next;
reg b_rr_eq_next;
reg b_mo_gt_next;
reg b_wrap_next;
reg b_acc_next;
reg b_assoc_bad_next;
reg b_stag_bad_next;
reg [15:0] b_cerr_code_next;
reg b_cerr_next;
reg [4:0] b_hlen_next;
reg [15:0] b_n_next;
reg [1:0] b_qn_next;
reg [31:0] b_msn1_next;
reg [31:0] b_msn_next;
reg [31:0] b_stag_next;
reg [3:0] b_op_next;
reg b_l_next;
reg b_t_next;
reg [CX_W-1:0] b_cx_next;
reg b_early_next;
reg b_first_next;
reg [CONN_W-1:0] b_conn_next;
reg b_valid_next;
reg c1_valid_next;

`include "ddp_rx_defs.vh"

// Ports (declared after the localparams of ddp_rx_defs.vh their widths use).
input  wire                        clk;
input  wire                        rst;
input  wire [CX_W-1:0]             cx_rd_data;
input  wire [ST_W-1:0]             st_rd_data;
input  wire [RG_W-1:0]             rg_rd_data;
input  wire                        h_valid;
input  wire [HF_W-1:0]             h_rec;
input  wire                        dc_in_ready;
output wire                        c_adv;
output wire [CONN_W-1:0]           hf_conn;
output wire [143:0]                hf_hdr;
output wire [31:0]                 hf_idx32;
output reg                         c1_valid_reg = 1'b0;
output wire [CONN_W-1:0]           p1_conn;
output reg                         b_valid_reg = 1'b0;
output reg  [CONN_W-1:0]           b_conn_reg;
output reg                         b_first_reg;
output reg                         b_early_reg;
output reg  [CX_W-1:0]             b_cx_reg;
output reg                         b_t_reg;
output reg                         b_l_reg;
output reg  [3:0]                  b_op_reg;
output reg  [31:0]                 b_stag_reg;
output reg  [31:0]                 b_msn_reg;
output reg  [31:0]                 b_msn1_reg;
output reg  [1:0]                  b_qn_reg;
output reg  [15:0]                 b_n_reg;
output reg  [4:0]                  b_hlen_reg;
output reg                         b_cerr_reg;
output reg  [15:0]                 b_cerr_code_reg;
output reg                         b_stag_bad_reg;
output reg                         b_assoc_bad_reg;
output reg                         b_acc_reg;
output reg                         b_wrap_reg;
output reg                         b_mo_gt_reg;
output reg                         b_rr_eq_reg;
output reg  [3:0]                  b_z_reg;
output reg  [ID_W-1:0]             b_id_reg;
output reg  [ST_W-2:0]             b_st_reg;
output reg  [72:0]                 bs_lt;
output reg  [72:0]                 bs_gt;
output reg  [72:0]                 bs_dt;
output reg  [72:0]                 bs_du;
output reg  [72:0]                 bs_mon;
output reg  [72:0]                 bs_long;
output reg  [3:0]                  bs_nobuf;
output reg  [3:0]                  bs_behind;

// --- check pipeline: H (table reads), C1, C1b (checks), C2 (decision) ---------
//
// One piece a clock. The three tables are read at H with addresses taken
// straight from the header record; C2 decides and writes the effects
// (queue advance, failure, invalidation) back. A piece reads its tables
// before the three pieces ahead of it have written theirs: C2 takes their
// effects from hist (the last three decisions, in pipeline order) instead.
// Everything moves together (c_adv), when the descriptor queue has room.

assign c_adv = dc_in_ready;

assign hf_conn = h_rec[HF_CONN +: CONN_W];
assign hf_hdr = h_rec[HF_HDR +: 144];
assign hf_idx32 = be32(hf_hdr, 2);

reg  [HF_W-1:0]      c1_rec_reg, c1_rec_next;

always @* begin
    c1_valid_next = c1_valid_reg;
    c1_rec_next = c1_rec_reg;
    if (c_adv) begin
        c1_valid_next = h_valid;
        c1_rec_next = h_rec;
    end
end

always @(posedge clk) begin
    c1_valid_reg <= c1_valid_next;
    c1_rec_reg <= c1_rec_next;
    if (rst) begin
        c1_valid_reg <= 1'b0;
    end
end

// C1: the header's fields, the context and the table entries.
wire                 p1_drop = c1_rec_reg[HF_DROP];
wire                 p1_early = c1_rec_reg[HF_EARLY];
wire                 p1_short = c1_rec_reg[HF_SHORT];
wire [15:0]          p1_n = c1_rec_reg[HF_N +: 16];
assign p1_conn = c1_rec_reg[HF_CONN +: CONN_W];
wire                 p1_first = c1_rec_reg[HF_FIRST];
wire [143:0]         hdr = c1_rec_reg[HF_HDR +: 144];

reg                    h_t;
reg                    h_l;
reg [1:0]              h_dv;
reg [1:0]              h_rv;
reg [3:0]              h_op;
reg [31:0]             h_stag;
reg [31:0]             h_qn;
reg [31:0]             h_msn;
reg [31:0]             h_mo;
reg [63:0]             h_to;
reg [4:0]              h_hlen;
reg                    h_short;
reg                    h_optag;
reg [1:0]              h_opqn;
reg                    h_cerr;
reg [15:0]             h_cerr_code;
reg [Q_W-1:0]          h_q;
reg [31:0]             h_first;
reg [RQ_AW:0]          h_cnt;
reg [15:0]             h_n;

always @* begin
    h_t = hdr[7];
    h_l = hdr[6];
    h_dv = hdr[1:0];
    h_rv = hdr[15:14];
    h_op = hdr[11:8];
    h_stag = be32(hdr, 2);          // the STag, or a Send with Invalidate's
    h_to = {be32(hdr, 6), be32(hdr, 10)};
    h_qn = be32(hdr, 6);
    h_msn = be32(hdr, 10);
    h_mo = be32(hdr, 14);
    // The header's length, less the beat that was not queued for
    // placement (drop): placement's octet 0 is the piece's first queued.
    h_hlen = (h_t ? 5'd14 : 5'd18) - (p1_drop ? KEEP_WI[4:0] : 5'd0);
    h_short = p1_short;
    h_n = p1_n;
    h_optag = h_op == 4'd0 || h_op == 4'd2;
    h_opqn = h_op == 4'd1 ? 2'd1 : h_op == 4'd7 ? 2'd2 : 2'd0;
    // rdmap.ClassifyHeader's order, after ddp.ParseHeader's length check.
    h_cerr = 1'b1;
    if (h_short) begin
        h_cerr_code = ERR_RDMAP_STREAM_CATASTROPHIC;          // RDMAP Remote Operation: catastrophic, stream
    end else if (h_dv != 2'd1) begin
        h_cerr_code = h_t ? ERR_DDP_TAGGED_INVALID_VERSION : ERR_DDP_UNTAGGED_INVALID_VERSION;   // DDP: invalid DDP version
    end else if (h_rv != 2'd1) begin
        h_cerr_code = ERR_RDMAP_INVALID_VERSION;          // RDMAP: invalid RDMAP version
    end else if (h_op[3] || h_optag != h_t) begin
        h_cerr_code = ERR_RDMAP_UNEXPECTED_OPCODE;          // RDMAP: unexpected opcode
    end else if (!h_t && h_qn > 32'd2) begin
        h_cerr_code = ERR_DDP_INVALID_QN;          // DDP: invalid QN
    end else if (!h_t && h_qn[1:0] != h_opqn) begin
        h_cerr_code = ERR_RDMAP_UNEXPECTED_OPCODE;
    end else begin
        h_cerr = 1'b0;
        h_cerr_code = 16'h0000;
    end
    h_q = cx_q(cx_rd_data[CX_Q0 +: CX_QS_W], h_qn[1:0]);
    {h_first, h_cnt} = h_q;
end

// Checks on the STag entry and the posted buffer just read, over two
// clocks, C1 and C1b, each at most 5 LUT levels: every sum of 16 bits or
// more is split in 8-bit chunks (sum72a at C1, sum72b at C1b, through
// the b_*_a registers), and every comparison of a sum is the sign of one
// (bit 71 of a 72-bit sum, operands one's complemented to 72 bits) or an
// equality found without a carry chain (sumeq). What the decision needs:
//   bounds:  TO < base, or TO + n > base + len (as integers: the same as
//            TO - base outside 0 .. 2^32-1 or off + n > len, 7.1);
//   address: addr + TO - base (tagged), addr + MO (untagged);
//   MO + n:  the message length, its check against the buffer;
//   d_j:     MSN - first - j for j = 0..3 (the window checks): whether its
//            bits above RQ_AW are zero, its low bits, its sign, whether it
//            is zero.
localparam integer LQ = RQ_AW + 1;           // low bits of d_j that the window check compares
localparam [71:0] MASK32 = {40'd0, {32{1'b1}}};
localparam [71:0] MASK_HI = MASK32 >> LQ;    // d_j's bits LQ..31, shifted down

reg                    st_valid;
reg                    st_bound;
reg [7:0]              st_key;
reg [31:0]             st_pd;
reg [31:0]             st_len;
reg [CONN_W-1:0]       st_conn;
reg [1:0]              st_acc;
reg [63:0]             st_base;
reg [ADDR_W-1:0]       st_addr;
reg [ADDR_W-1:0]       rg_addr;
reg [31:0]             rg_len;
reg [ID_W-1:0]         rg_id;
reg [71:0]             x_to;
reg [71:0]             x_nbase;
reg [71:0]             x_n;
reg [71:0]             x_mo;
reg [71:0]             x_nlen;
reg [71:0]             x_nrglen;
reg [71:0]             x_staddr;
reg [71:0]             x_rgaddr;
reg [143:0]            a_cs;
reg [143:0]            a_cs2;
reg [161:0]            a_lt;
reg [161:0]            a_gt;
reg [161:0]            a_dt;
reg [161:0]            a_du;
reg [161:0]            a_mon;
reg [161:0]            a_long;
reg                    a_wrap;
reg                    a_mo_gt;
reg                    a_rr_eq;
wire [31:0]            a_msn1;           // MSN + 1 (rnic_incdec: fadd's carry tree took 6 levels)
reg                    c1_stag_bad;
reg                    c1_assoc_bad;
reg [4*162-1:0]        a_sg;            // d_j's sign, first clock
reg [3:0]              a_uz;       // d_j's bits LQ..31 zero, d_j zero
reg [3:0]              a_z;
reg [4*LQ-1:0]         a_low;           // d_j's bits 0..LQ-1
reg [4*(LQ+1)-1:0]     a_cm;            // count - j: the window's size
reg [31:0]             a_kj;
reg [LQ:0]             a_c;
reg [LQ:0]             a_fl;      // first + j, MSN - (first + j): low bits, carry/borrow
reg [LQ:0]             a_dl;
reg [1:0]              a_hc;

rnic_incdec #(.W(32), .DEC(0)) u_msn1 (.x(h_msn), .y(a_msn1));

always @* begin : c1_arith
    integer j;
    {st_valid, st_key, st_pd, st_bound, st_conn, st_acc, st_base, st_len, st_addr} = st_rd_data;
    {rg_addr, rg_len, rg_id} = rg_rd_data;
    x_to = {8'd0, h_to};
    x_nbase = ~{8'd0, st_base};
    x_n = {56'd0, h_n};
    x_mo = {40'd0, h_mo};
    x_nlen = ~{40'd0, st_len};
    x_nrglen = ~{40'd0, rg_len};
    x_staddr = 72'd0;
    x_staddr[ADDR_W-1:0] = st_addr;
    x_rgaddr = 72'd0;
    x_rgaddr[ADDR_W-1:0] = rg_addr;
    // TO < base: TO - base is negative.
    a_lt = sum72a(x_to, x_nbase, 1'b1);
    // TO + n > base + len: TO + n - base - len - 1 (TO + n + ~base + ~len
    // + 1) is not negative.
    a_cs = csa72(x_to, x_n, x_nbase);
    a_cs2 = csa72(a_cs[143:72], a_cs[71:0], x_nlen);
    a_gt = sum72a(a_cs2[143:72], a_cs2[71:0] | 72'd1, 1'b0);
    // The host address: addr + TO - base (mod 2^64), or addr + MO.
    a_cs = csa72(x_staddr, x_to, x_nbase);
    a_dt = sum72a(a_cs[143:72], a_cs[71:0] | 72'd1, 1'b0);
    a_du = sum72a(x_rgaddr, x_mo, 1'b0);
    // MO + n, and MO + n > the buffer's length: MO + n - len - 1 not negative.
    a_mon = sum72a(x_mo, x_n, 1'b0);
    a_cs = csa72(x_mo, x_n, x_nrglen);
    a_long = sum72a(a_cs[143:72], a_cs[71:0], 1'b0);
    // A Read Request in one segment: MO 0 and 28 octets (rdmap.DeliveredReadRequest).
    a_rr_eq = h_mo == 32'd0 && h_n == 16'd28;
    // TO + n carries out of 64 bits (n < 2^16).
    a_wrap = (&h_to[63:16]) && gt33({17'd0, h_to[15:0]}, {17'd0, ~h_n});
    a_mo_gt = gt33({1'b0, h_mo}, {1'b0, rg_len});
    c1_stag_bad = !st_valid || st_key != h_stag[7:0] || (h_stag >> (8 + STAG_AW)) != 32'd0;
    c1_assoc_bad = st_pd != cx_rd_data[CX_PD +: 32] || (st_bound && st_conn != p1_conn);
    // d_j = MSN - first - j = MSN + ~first + (1 - j), for j deliveries of
    // the queue that the context read has not seen (j = 0..3).
    for (j = 0; j < 4; j = j + 1) begin
        a_kj = 32'd1 - j;
        a_cs = csa72({40'd0, h_msn}, {40'd0, ~h_first}, {40'd0, a_kj});
        a_sg[162*j +: 162] = sum72a(a_cs[143:72] & MASK32, a_cs[71:0] & MASK32, 1'b0);
        // d_j == 0: MSN = first + j. d_j's bits LQ.. zero: MSN's bits
        // LQ.. are first + j's plus the borrow of d_j's low bits, that is
        // first's plus a_hc (0..2). Both as equalities (sumeq) on MSN and
        // first, not on the sums.
        a_z[j] = sumeq({40'd0, h_first}, {70'd0, j[1:0]}, 1'b0, {40'd0, h_msn}, MASK32);
        a_fl = {1'b0, h_first[LQ-1:0]} + j[LQ:0];
        a_dl = {1'b0, h_msn[LQ-1:0]} - {1'b0, a_fl[LQ-1:0]};
        a_hc = {1'b0, a_fl[LQ]} + {1'b0, a_dl[LQ]};
        a_uz[j] = sumeq({40'd0, h_first} >> LQ, {70'd0, a_hc}, 1'b0, {40'd0, h_msn} >> LQ, MASK_HI);
        a_low[LQ*j +: LQ] = a_dl[LQ-1:0];
        a_c = {1'b0, h_cnt} - j[LQ:0];
        a_cm[(LQ+1)*j +: LQ+1] = a_c;
    end
end

// C1b registers.
reg [161:0]            b_lt_a, b_lt_a_next;
reg [161:0]            b_gt_a, b_gt_a_next;
reg [161:0]            b_dt_a, b_dt_a_next;
reg [161:0]            b_du_a, b_du_a_next;
reg [161:0]            b_mon_a, b_mon_a_next;
reg [161:0]            b_long_a, b_long_a_next;
reg [4*162-1:0]        b_sg_a, b_sg_a_next;
reg [3:0]              b_uz_reg, b_uz_next;
reg [4*LQ-1:0]         b_low_reg, b_low_next;
reg [4*(LQ+1)-1:0]     b_cm_reg, b_cm_next;

always @* begin
    b_valid_next = b_valid_reg;
    b_conn_next = b_conn_reg;
    b_first_next = b_first_reg;
    b_early_next = b_early_reg;
    b_cx_next = b_cx_reg;
    b_t_next = b_t_reg;
    b_l_next = b_l_reg;
    b_op_next = b_op_reg;
    b_stag_next = b_stag_reg;
    b_msn_next = b_msn_reg;
    b_msn1_next = b_msn1_reg;
    b_qn_next = b_qn_reg;
    b_n_next = b_n_reg;
    b_hlen_next = b_hlen_reg;
    b_cerr_next = b_cerr_reg;
    b_cerr_code_next = b_cerr_code_reg;
    b_stag_bad_next = b_stag_bad_reg;
    b_assoc_bad_next = b_assoc_bad_reg;
    b_acc_next = b_acc_reg;
    b_wrap_next = b_wrap_reg;
    b_mo_gt_next = b_mo_gt_reg;
    b_rr_eq_next = b_rr_eq_reg;
    b_lt_a_next = b_lt_a;
    b_gt_a_next = b_gt_a;
    b_dt_a_next = b_dt_a;
    b_du_a_next = b_du_a;
    b_mon_a_next = b_mon_a;
    b_long_a_next = b_long_a;
    b_sg_a_next = b_sg_a;
    b_uz_next = b_uz_reg;
    b_z_next = b_z_reg;
    b_low_next = b_low_reg;
    b_cm_next = b_cm_reg;
    b_id_next = b_id_reg;
    b_st_next = b_st_reg;
    if (c_adv) begin
        b_valid_next = c1_valid_reg;
        b_conn_next = p1_conn;
        b_first_next = p1_first;
        b_early_next = p1_early;
        b_cx_next = cx_rd_data;
        b_t_next = h_t;
        b_l_next = h_l;
        b_op_next = h_op;
        b_stag_next = h_stag;
        b_msn_next = h_msn;
        b_msn1_next = a_msn1;
        b_qn_next = h_qn[1:0];
        b_n_next = h_n;
        b_hlen_next = h_hlen;
        b_cerr_next = h_cerr;
        b_cerr_code_next = h_cerr_code;
        b_stag_bad_next = c1_stag_bad;
        b_assoc_bad_next = c1_assoc_bad;
        b_acc_next = !st_acc[0];
        b_wrap_next = a_wrap;
        b_mo_gt_next = a_mo_gt;
        b_rr_eq_next = a_rr_eq;
        b_lt_a_next = a_lt;
        b_gt_a_next = a_gt;
        b_dt_a_next = a_dt;
        b_du_a_next = a_du;
        b_mon_a_next = a_mon;
        b_long_a_next = a_long;
        b_sg_a_next = a_sg;
        b_uz_next = a_uz;
        b_z_next = a_z;
        b_low_next = a_low;
        b_cm_next = a_cm;
        b_id_next = rg_id;
        b_st_next = st_rd_data[ST_VALID-1:0];
    end
end

always @(posedge clk) begin
    b_valid_reg <= b_valid_next;
    b_conn_reg <= b_conn_next;
    b_first_reg <= b_first_next;
    b_early_reg <= b_early_next;
    b_cx_reg <= b_cx_next;
    b_t_reg <= b_t_next;
    b_l_reg <= b_l_next;
    b_op_reg <= b_op_next;
    b_stag_reg <= b_stag_next;
    b_msn_reg <= b_msn_next;
    b_msn1_reg <= b_msn1_next;
    b_qn_reg <= b_qn_next;
    b_n_reg <= b_n_next;
    b_hlen_reg <= b_hlen_next;
    b_cerr_reg <= b_cerr_next;
    b_cerr_code_reg <= b_cerr_code_next;
    b_stag_bad_reg <= b_stag_bad_next;
    b_assoc_bad_reg <= b_assoc_bad_next;
    b_acc_reg <= b_acc_next;
    b_wrap_reg <= b_wrap_next;
    b_mo_gt_reg <= b_mo_gt_next;
    b_rr_eq_reg <= b_rr_eq_next;
    b_lt_a <= b_lt_a_next;
    b_gt_a <= b_gt_a_next;
    b_dt_a <= b_dt_a_next;
    b_du_a <= b_du_a_next;
    b_mon_a <= b_mon_a_next;
    b_long_a <= b_long_a_next;
    b_sg_a <= b_sg_a_next;
    b_uz_reg <= b_uz_next;
    b_z_reg <= b_z_next;
    b_low_reg <= b_low_next;
    b_cm_reg <= b_cm_next;
    b_id_reg <= b_id_next;
    b_st_reg <= b_st_next;
    if (rst) begin
        b_valid_reg <= 1'b0;
    end
end

// C1b: the sums' second clock, and the window checks: d_j outside 0 ..
// count - j - 1 (its bits above RQ_AW not zero, or its low bits at or past
// count - j).
reg [72:0]             bs_sg;

always @* begin : c1b_sums
    integer j;
    bs_lt = sum72b(b_lt_a);
    bs_gt = sum72b(b_gt_a);
    bs_dt = sum72b(b_dt_a);
    bs_du = sum72b(b_du_a);
    bs_mon = sum72b(b_mon_a);
    bs_long = sum72b(b_long_a);
    for (j = 0; j < 4; j = j + 1) begin
        bs_sg = sum72b(b_sg_a[162*j +: 162]);
        bs_behind[j] = bs_sg[31];
        bs_nobuf[j] = !b_uz_reg[j] || {1'b0, b_low_reg[LQ*j +: LQ]} >= b_cm_reg[(LQ+1)*j +: LQ+1];
    end
end

// Not needed here: st_acc[1], b_lt_a, b_gt_a, b_dt_a, b_du_a, b_mon_a, b_long_a, b_sg_a, bs_sg.
wire unused_ok = &{1'b0, st_acc[1], b_lt_a, b_gt_a, b_dt_a, b_du_a, b_mon_a, b_long_a, b_sg_a, bs_sg};
endmodule

`resetall
