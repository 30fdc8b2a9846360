// ddp_tx: transmit DDP/RDMAP header builder and MULPDU segmenter, DATA_W
// bits per clock.
//
// Turns RDMAP messages (a descriptor, and for most opcodes a payload frame)
// into DDP Segments (ULPDUs), one AXI4-Stream frame each, octet for octet
// the segments iwarp/rdmap's Message.AppendSegments writes: the DDP header
// (RFC 5041 4.2 tagged, 14 octets, or 4.3 untagged, 18 octets) with the
// RDMAP control octet in its first RsvdULP octet (RFC 5040), then the
// segment's share of the payload. Every segment but a message's last
// carries MULPDU minus the header octets of payload and has L=0; TO (tagged)
// or MO (untagged) advances by the payload already sent; a zero-length
// message is one segment, header only (RFC 5041 5.2; iwarp/ddp Segmenter).
// MPA framing is the next block's business (mpa_tx).
//
// Descriptor, s_desc (valid/ready, one per message; s_desc_ready registered):
//   opcode     RDMAP opcode (RFC 5040): 0 RDMA Write, 1 Read Request,
//              2 Read Response, 3 Send, 4 Send with Invalidate, 5 Send with
//              SE, 6 Send with SE and Invalidate, 7 Terminate.
//   stag, to   Data Sink STag and TO of the first octet (Write, Read
//              Response; ignored otherwise).
//   msn        MSN of an untagged message on its queue (ignored if tagged);
//              the queue (QN 0 Send, 1 Read Request, 2 Terminate) follows
//              from the opcode.
//   inv_stag   the STag to invalidate (opcodes 4 and 6); must be zero on any
//              other untagged message (ignored on tagged ones).
//   len        payload octets taken from s_axis, for every opcode but the
//              Read Request (ignored there).
//   rr_*       the Read Request's 28-octet body (RFC 5040 4.4): sink STag,
//              sink TO, size, source STag, source TO.
//   mulpdu     the largest segment, header included.
//   ctx        opaque, copied to every segment (and error) of the message.
//
// Payload, s_axis: one frame per message whose len is not zero (none for
// zero-length messages and for Read Requests), in descriptor order, lane-0
// aligned (octet k of the message in lane k mod N of its beat k div N, lane
// 0 = tdata[7:0]), every beat full but the last, len octets in all. tkeep
// is not looked at: len says where the payload ends. A Terminate's payload
// (Terminate header and what follows it) comes from the frame too. A frame
// of another length than len is a broken contract, with undefined result.
//
// Output, m_axis: one frame per segment, lane-0 aligned, header first; tkeep
// all ones but in the last beat (a run from lane 0); tuser = {ctx,
// ulpdu_len[15:0]} (the segment's octets, the MPA ULPDU_Length), the same
// on every beat of the frame. All outputs are registered.
//
// Errors: a descriptor the Go stack refuses (Message.Segments returns an
// error) produces no segment; its payload frame, if it has one, is read and
// dropped, and err_valid pulses for one clock with err_code and err_ctx, in
// message order, when the message reaches the segment generator. The code
// is that of the first check Go's Message.Segments fails, in Go's order:
//   1  opcode not one of the eight (rdmap: cannot send opcode)
//   2  inv_stag not zero on an untagged message other than opcodes 4 and 6
//      (rdmap: ... cannot carry an Invalidate STag)
//   3  Terminate payload malformed (rdmap.ParseTerminate: length not what
//      its M/D/R flags and DDP header's T bit announce, layer above 2, R and
//      D with a DDP header that is not a Read Request's)
//   4  Read Request (46 octets) or Terminate (18 + len) longer than mulpdu
//   5  mulpdu leaves no room for payload after the 14/18-octet header
//   6  tagged message whose TO + len wraps the 64-bit TO
// (len is 32 bits, so DDP's 2^32 message limit cannot be exceeded, and an
// untagged message always starts at MO 0.) A Terminate's payload is checked
// when it reaches the head of the payload buffer, so a Terminate costs a
// few idle clocks; its checks 3 and 4 are made there, in that order.
//
// Throughput: one output beat per clock with back-to-back descriptors and
// payload and an always-ready sink, within and between segments and
// messages, including one single-beat segment per clock (a small message
// per clock, or a long message with a small MULPDU). The payload input
// runs at up to one beat per clock; it needs fewer beats than the output
// (every segment adds a header), so s_axis_tready drops now and then.
// Latency: 11 clocks from the clock edge that accepts a descriptor to the
// edge where its first beat can be taken (m_axis_tvalid high), when the
// pipeline is empty and the payload is there.
//
// Pipeline, each stage the logic in front of its registers:
//   d1        descriptor skid buffer (registered s_desc_ready).
//   d2, d3    checks (error codes 1, 2, 3, 4 for a Read Request, 5, 6),
//             payload per segment P = mulpdu - header, header template.
//   sg        segment generator: one segment per clock; remaining octets
//             R counted down by P (R = hi * 2^18 + lo, so the loop is an
//             18-bit subtract; the "last segment" flag is computed a
//             segment ahead, R <= 2P).
//   sp1..sp4  per segment: chunk length C, offset in the message, TO + off
//             (64-bit, 16 bits per stage), segment length, beats, how the
//             payload lines up with the input beats, the final header.
//   bq        skid buffer for one segment, so that sg..sp4 stall on a
//             register (bq full) rather than on bg's decision.
//   bg        beat generator: the current output beat's plan (header beats,
//             the beat where header and payload meet, payload beats; which
//             input beats it needs and is done with), the Terminate check,
//             the dropping of refused messages' frames, the error output.
//   win       payload buffer, 4 beats in a ring; the plan reads the beat
//             holding the next payload octet (lo) and the one after it (hi).
//   x1        lo and hi merged lane by lane (lanes at or above the offset of
//             the next octet from lo, the rest from hi), rotated by the low
//             2 bits of the rotation.
//   out       the rest of the rotation, header lanes laid over it.
// The rotation is constant over a segment: (segment offset - header
// length) mod N. Stages bg, x1 and out stall together when the sink holds
// m_axis_tready low; sg..sp4 stall when bq is full, d1..d3 when sg has a
// message waiting. Adders and comparators on the loops and in the wider
// stages are written as trees (fadd, gt33) to stay within 5 LUT levels.
//
// Verification: tests/ddp_tx/test_ddp_tx.py, every expected octet from
// iwarp/rdmap through cmd/rnic-oracle (op rdmap_segments).

`resetall
`timescale 1ns / 1ps
`default_nettype none

module ddp_tx #(
    parameter DATA_W = 64,
    parameter CTX_W = 16
) (
    input  wire                    clk,
    input  wire                    rst,

    input  wire                    s_desc_valid,
    output wire                    s_desc_ready,
    input  wire [3:0]              s_desc_opcode,
    input  wire [31:0]             s_desc_stag,
    input  wire [63:0]             s_desc_to,
    input  wire [31:0]             s_desc_msn,
    input  wire [31:0]             s_desc_inv_stag,
    input  wire [31:0]             s_desc_len,
    input  wire [31:0]             s_desc_rr_sink_stag,
    input  wire [63:0]             s_desc_rr_sink_to,
    input  wire [31:0]             s_desc_rr_size,
    input  wire [31:0]             s_desc_rr_src_stag,
    input  wire [63:0]             s_desc_rr_src_to,
    input  wire [15:0]             s_desc_mulpdu,
    input  wire [CTX_W-1:0]        s_desc_ctx,

    input  wire [DATA_W-1:0]       s_axis_tdata,
    input  wire [DATA_W/8-1:0]     s_axis_tkeep,
    input  wire                    s_axis_tvalid,
    output wire                    s_axis_tready,
    input  wire                    s_axis_tlast,

    output wire [DATA_W-1:0]       m_axis_tdata,
    output wire [DATA_W/8-1:0]     m_axis_tkeep,
    output wire                    m_axis_tvalid,
    input  wire                    m_axis_tready,
    output wire                    m_axis_tlast,
    output wire [CTX_W+16-1:0]     m_axis_tuser,

    output wire                    err_valid,
    output wire [3:0]              err_code,
    output wire [CTX_W-1:0]        err_ctx
);

localparam KEEP_W = DATA_W / 8;          // octets per beat, N
localparam LG = $clog2(KEEP_W);
localparam USER_W = CTX_W + 16;
localparam CNT_W = 16 - LG;              // beats of a segment, minus one

// Header lengths: tagged, untagged, untagged with the Read Request body.
localparam [1:0] HC_T = 2'd0, HC_U = 2'd1, HC_R = 2'd2;
localparam HL_T = 14, HL_U = 18, HL_R = 46;
localparam HDR_N = HL_R;                 // longest header, octets
localparam HDR_W = 8 * HDR_N;
localparam HDR_LANES = KEEP_W < HDR_N ? KEEP_W : HDR_N;

// Per header length: whole header beats before the beat where the header
// ends (I0), and the header octets in that beat (HM, never 0 as no header
// length is a multiple of N).
// MIL: the segment length up to which that beat is the last.
localparam integer I0_TI = HL_T / KEEP_W, I0_UI = HL_U / KEEP_W, I0_RI = HL_R / KEEP_W;
localparam integer HM_TI = HL_T % KEEP_W, HM_UI = HL_U % KEEP_W, HM_RI = HL_R % KEEP_W;
localparam integer MIL_TI = (I0_TI + 1) * KEEP_W, MIL_UI = (I0_UI + 1) * KEEP_W,
                   MIL_RI = (I0_RI + 1) * KEEP_W;
localparam integer KEEP_WI = KEEP_W;
localparam [2:0] I0_T = I0_TI[2:0], I0_U = I0_UI[2:0], I0_R = I0_RI[2:0];
localparam [LG:0] HM_T = HM_TI[LG:0], HM_U = HM_UI[LG:0], HM_R = HM_RI[LG:0];
localparam [15:0] MIL_T = MIL_TI[15:0], MIL_U = MIL_UI[15:0], MIL_R = MIL_RI[15:0];
localparam [LG:0] N_L = KEEP_WI[LG:0];   // N, as a lane count

// RDMAP opcodes (RFC 5040) and error codes (see the header).
localparam [3:0] OP_WRITE = 4'd0, OP_READ_REQ = 4'd1, OP_READ_RESP = 4'd2,
                 OP_SEND_INV = 4'd4, OP_SEND_SE_INV = 4'd6, OP_TERMINATE = 4'd7;
localparam [3:0] ERR_NONE = 4'd0, ERR_OPCODE = 4'd1, ERR_INV_STAG = 4'd2,
                 ERR_TERMINATE = 4'd3, ERR_NO_FIT = 4'd4, ERR_MULPDU = 4'd5,
                 ERR_TO_WRAP = 4'd6;

initial begin
    if (DATA_W != 64 && DATA_W != 128 && DATA_W != 256 && DATA_W != 512) begin
        $error("ddp_tx: DATA_W must be 64, 128, 256 or 512, got %0d", DATA_W);
        $finish;
    end
    if (CTX_W < 1) begin
        $error("ddp_tx: CTX_W must be at least 1, got %0d", CTX_W);
        $finish;
    end
end

// --- helpers ----------------------------------------------------------------

`include "rnic_arith.vh"


// Big-endian fields (RFC 5041 4) in lane order: the most significant octet
// in the lowest lane.
function [31:0] be32(input [31:0] v);
    be32 = {v[7:0], v[15:8], v[23:16], v[31:24]};
endfunction

function [63:0] be64(input [63:0] v);
    be64 = {be32(v[31:0]), be32(v[63:32])};
endfunction

// Lanes at or above v.
function [KEEP_W-1:0] lanes_from(input [LG-1:0] v);
    integer b;
    begin
        for (b = 0; b < KEEP_W; b = b + 1) begin
            lanes_from[b] = b >= v;
        end
    end
endfunction

// Lanes below v, 1 <= v <= N.
function [KEEP_W-1:0] lanes_below(input [LG:0] v);
    integer b;
    begin
        for (b = 0; b < KEEP_W; b = b + 1) begin
            lanes_below[b] = b < v;
        end
    end
endfunction

function [5:0] hdr_len(input [1:0] hc);
    case (hc)
        HC_T: hdr_len = HL_T;
        HC_U: hdr_len = HL_U;
        default: hdr_len = HL_R;
    endcase
endfunction

function [2:0] hdr_i0(input [1:0] hc);
    case (hc)
        HC_T: hdr_i0 = I0_T;
        HC_U: hdr_i0 = I0_U;
        default: hdr_i0 = I0_R;
    endcase
endfunction

function [LG-1:0] hdr_hm(input [1:0] hc);
    case (hc)
        HC_T: hdr_hm = HM_T[LG-1:0];
        HC_U: hdr_hm = HM_U[LG-1:0];
        default: hdr_hm = HM_R[LG-1:0];
    endcase
endfunction

// term_ok(f, n): rdmap.ParseTerminate accepts the n-octet Terminate payload
// (RFC 5040 4.8) whose fields are f (see w0_tc): Terminate Control, then the DDP Segment Length
// if M, the offending DDP header if D (14 octets if its T bit is set, else
// 18), the Read Request header if R, and nothing after; a layer of at most
// 2 (LLP); and if R and D, a DDP header that is a Read Request's. Every
// field this needs is in the first 8 octets; a payload too short for a
// field it announces fails the length check whatever the missing octets
// would hold.
function term_ok(input [16:0] f, input [5:0] n);
    reg m, d, r, t;
    reg [3:0] layer, op;
    reg [5:0] total;
    begin
        {layer, m, d, r} = f[16:10];
        t = m ? f[4] : f[9];                 // T bit of the DDP header
        op = m ? f[3:0] : f[8:5];            // its RDMAP opcode
        total = 6'd4 + (m ? 6'd2 : 6'd0) + (d ? (t ? 6'd14 : 6'd18) : 6'd0) + (r ? 6'd28 : 6'd0);
        term_ok = layer <= 4'd2 && total == n && !(r && d && (t || op != OP_READ_REQ));
    end
endfunction

// --- control signals between the sections (defined further down) -----------

wire en_d;      // d1..d3 advance
wire en_s;      // sg and sp1..sp4 advance
wire sg_load;   // sg takes the message in d3

// --- d1: descriptor skid buffer ---------------------------------------------

localparam DESC_W = 4 + 32 + 64 + 32 + 32 + 32 + 32 + 64 + 32 + 32 + 64 + 16 + CTX_W;

wire [DESC_W-1:0] s_desc = {
    s_desc_opcode, s_desc_stag, s_desc_to, s_desc_msn, s_desc_inv_stag, s_desc_len,
    s_desc_rr_sink_stag, s_desc_rr_sink_to, s_desc_rr_size, s_desc_rr_src_stag,
    s_desc_rr_src_to, s_desc_mulpdu, s_desc_ctx
};

reg               s_desc_ready_reg = 1'b0, s_desc_ready_next;
reg               sk_valid_reg = 1'b0, sk_valid_next;
reg [DESC_W-1:0]  sk_reg;
reg               d1_valid_reg = 1'b0, d1_valid_next;
reg [DESC_W-1:0]  d1_reg;

assign s_desc_ready = s_desc_ready_reg;

wire desc_acc = s_desc_valid && s_desc_ready_reg;
wire d1_load = en_d || !d1_valid_reg;

always @* begin
    sk_valid_next = sk_valid_reg;
    d1_valid_next = d1_valid_reg;
    if (d1_load) begin
        // A full skid buffer held s_desc_ready low: nothing new this clock.
        d1_valid_next = sk_valid_reg || desc_acc;
        sk_valid_next = 1'b0;
    end else if (desc_acc) begin
        sk_valid_next = 1'b1;
    end
    s_desc_ready_next = !sk_valid_next;
end

wire [3:0]        d1_op;
wire [31:0]       d1_stag, d1_msn, d1_inv, d1_len;
wire [63:0]       d1_to;
wire [31:0]       d1_rr_sink_stag, d1_rr_size, d1_rr_src_stag;
wire [63:0]       d1_rr_sink_to, d1_rr_src_to;
wire [15:0]       d1_mulpdu;
wire [CTX_W-1:0]  d1_ctx;

assign {d1_op, d1_stag, d1_to, d1_msn, d1_inv, d1_len, d1_rr_sink_stag, d1_rr_sink_to,
        d1_rr_size, d1_rr_src_stag, d1_rr_src_to, d1_mulpdu, d1_ctx} = d1_reg;

// --- d2: checks, P, header template -----------------------------------------

reg              d2_valid_reg = 1'b0;
reg              d2_tagged_reg, d2_rr_reg, d2_term_reg;
reg              d2_e_op_reg, d2_e_inv_reg, d2_e_term_reg;
reg              d2_rr_nofit_reg, d2_term_nofit_reg, d2_e_mulpdu_reg;
reg              d2_c16_reg, d2_gt_hi_reg, d2_eq_hi_reg;   // carry of len + TO[31:0], in halves
reg              d2_to_hi_ones_reg, d2_to_47_ones_reg;
reg [15:0]       d2_p_reg;
reg [31:0]       d2_len_reg;
reg [13:0]       d2_hi_m1_reg;
reg [63:0]       d2_to_reg;
reg [15:0]       d2_to_p1_lo_reg, d2_to_p1_hi_reg;
reg [HDR_W-1:0]  d2_tmpl_reg;
reg [CTX_W-1:0]  d2_ctx_reg;

reg              d1_tagged, d1_rr, d1_term;
reg [31:0]       d1_lm;
reg [HDR_W-1:0]  d1_tmpl;
reg [31:0]       d1_qn;
wire [32:0]      d1_p = fadd({16'd0, d1_mulpdu}, d1_tagged ? 32'h0000FFF2 : 32'h0000FFEE, 1'b0);
// hi - 1 of a Read Request (whose payload octets are 0, not len) is unused.
wire [32:0]      d1_hi_m1 = fadd({18'd0, d1_len[31:18]}, 32'h00003FFF, 1'b0);
wire [32:0]      d1_to_p1_lo = fadd({16'd0, d1_to[47:32]}, 32'd0, 1'b1);
wire [32:0]      d1_to_p1_hi = fadd({16'd0, d1_to[63:48]}, 32'd0, 1'b1);

always @* begin
    d1_tagged = d1_op == OP_WRITE || d1_op == OP_READ_RESP;
    d1_rr = d1_op == OP_READ_REQ;
    d1_term = d1_op == OP_TERMINATE;
    d1_lm = d1_rr ? 32'd0 : d1_len;    // payload octets in the frame
    d1_qn = d1_rr ? 32'd1 : d1_term ? 32'd2 : 32'd0;
    // Header octets in lane order; the L bit, TO and MO are filled in per
    // segment (sp4). Control octet: T, L, Rsvd 0, DV 1 (RFC 5041 4.1);
    // then RDMAP's: RV 1, opcode (RFC 5040).
    d1_tmpl = {HDR_W{1'b0}};
    d1_tmpl[7:0] = {d1_tagged, 6'd0, 1'b1};
    d1_tmpl[15:8] = {4'h4, d1_op};
    if (d1_tagged) begin
        d1_tmpl[8*2 +: 32] = be32(d1_stag);
    end else begin
        d1_tmpl[8*2 +: 32] = be32(d1_inv);     // RsvdULP[8:39]
        d1_tmpl[8*6 +: 32] = be32(d1_qn);
        d1_tmpl[8*10 +: 32] = be32(d1_msn);
        if (d1_rr) begin                       // RFC 5040 4.4
            d1_tmpl[8*18 +: 32] = be32(d1_rr_sink_stag);
            d1_tmpl[8*22 +: 64] = be64(d1_rr_sink_to);
            d1_tmpl[8*30 +: 32] = be32(d1_rr_size);
            d1_tmpl[8*34 +: 32] = be32(d1_rr_src_stag);
            d1_tmpl[8*38 +: 64] = be64(d1_rr_src_to);
        end
    end
end

// --- d3: error code, first segment's "last" flag ----------------------------

reg              d3_valid_reg = 1'b0;
reg [1:0]        d3_hc_reg;
reg [3:0]        d3_err_reg;
reg              d3_tchk_reg, d3_tfit_bad_reg, d3_frame_reg, d3_last_reg;
reg [15:0]       d3_p_reg;
reg [31:0]       d3_len_reg;
reg [13:0]       d3_hi_m1_reg;
reg [63:0]       d3_to_reg;
reg [31:0]       d3_to_hi_p1_reg;
reg [HDR_W-1:0]  d3_tmpl_reg;
reg [CTX_W-1:0]  d3_ctx_reg;

reg [3:0]        d2_err;
reg              d2_single;
reg              d2_to_wrap;

always @* begin
    d2_to_wrap = d2_tagged_reg && d2_to_hi_ones_reg
        && (d2_gt_hi_reg || (d2_eq_hi_reg && d2_c16_reg));
    // Go's order (Message.Segments): Header (opcode, Invalidate STag),
    // Read Request / Terminate format, their fit, then NewSegmenter
    // (MULPDU, TO wrap). A well-sized Terminate's format and fit are
    // checked when its payload is there (bg).
    if (d2_e_op_reg) begin
        d2_err = ERR_OPCODE;
    end else if (d2_e_inv_reg) begin
        d2_err = ERR_INV_STAG;
    end else if (d2_e_term_reg) begin
        d2_err = ERR_TERMINATE;
    end else if (d2_rr_reg && d2_rr_nofit_reg) begin
        d2_err = ERR_NO_FIT;
    end else if (!d2_term_reg && d2_e_mulpdu_reg) begin
        d2_err = ERR_MULPDU;
    end else if (d2_to_wrap) begin
        d2_err = ERR_TO_WRAP;
    end else begin
        d2_err = ERR_NONE;
    end
    // One segment, whatever P says.
    d2_single = d2_rr_reg || d2_term_reg || d2_e_op_reg || d2_e_inv_reg || d2_e_mulpdu_reg
        || d2_to_wrap;
end

// --- sg: segment generator --------------------------------------------------

reg              sg_valid_reg = 1'b0;
reg              sg_last_reg;          // the current segment is the message's last
reg [17:0]       sg_lo_reg;            // remaining octets R = hi * 2^18 + lo
reg [13:0]       sg_hi_reg;
reg [13:0]       sg_hi_m1_reg;         // hi - 1 (stale the clock after a borrow, unused then)
reg [15:0]       sg_p_reg;
reg [1:0]        sg_hc_reg;
reg [3:0]        sg_err_reg;
reg              sg_tchk_reg, sg_tfit_bad_reg, sg_frame_reg;
reg [31:0]       sg_len_reg;
reg [63:0]       sg_to_reg;
reg [31:0]       sg_to_hi_p1_reg;
reg [HDR_W-1:0]  sg_tmpl_reg;
reg [CTX_W-1:0]  sg_ctx_reg;

wire sg_take = !sg_valid_reg || sg_last_reg;   // sg takes d3's message when it advances
assign sg_load = en_s && sg_take;
assign en_d = !d3_valid_reg || sg_load;

// lo - P, and whether it borrows from hi. A borrow leaves lo >= 2^18 - P >
// P, so two borrows never come in a row, and hi - 1 can be recomputed from
// hi every clock.
wire [32:0] sg_lo_sub = fadd({14'd0, sg_lo_reg}, {14'd0, 2'b11, ~sg_p_reg}, 1'b1);
wire        sg_borrow = !sg_lo_sub[18];
wire [32:0] sg_hi_dec = fadd({18'd0, sg_hi_reg}, 32'h00003FFF, 1'b0);
// The next segment is the last if R - P <= P.
wire        sg_last_next = sg_hi_reg == 14'd0
    && !gt33({15'd0, sg_lo_reg}, {16'd0, sg_p_reg, 1'b0});

// --- sp1: chunk length, offset (low half) ----------------------------------

reg              sp1_valid_reg = 1'b0;
reg              sp1_last_reg;
reg [15:0]       sp1_c_reg;            // payload octets of the segment
reg [15:0]       sp1_off_lo_reg;       // offset of its first payload octet in the message
reg              sp1_off_c_reg;        // ... and the carry of its low half
reg [15:0]       sp1_rem_hi_reg;       // R[31:16]
reg [1:0]        sp1_hc_reg;
reg [3:0]        sp1_err_reg;
reg              sp1_tchk_reg, sp1_tfit_bad_reg, sp1_frame_reg;
reg [15:0]       sp1_len_hi_reg;
reg [5:0]        sp1_len6_reg;
reg [63:0]       sp1_to_reg;
reg [31:0]       sp1_to_hi_p1_reg;
reg [HDR_W-1:0]  sp1_tmpl_reg;
reg [CTX_W-1:0]  sp1_ctx_reg;

wire [32:0] sg_off_lo = fadd({16'd0, sg_len_reg[15:0]}, {16'd0, ~sg_lo_reg[15:0]}, 1'b1);

// --- sp2: offset (high half), segment length, TO (low quarter) --------------

reg              sp2_valid_reg = 1'b0;
reg              sp2_last_reg;
reg [15:0]       sp2_c_reg;
reg              sp2_c_zero_reg;
reg [15:0]       sp2_sl_reg;           // segment octets, header included
reg [15:0]       sp2_off_lo_reg, sp2_off_hi_reg;
reg [15:0]       sp2_to_lo_reg;        // (TO + offset)[15:0]
reg              sp2_to_c_reg;
reg [1:0]        sp2_hc_reg;
reg [3:0]        sp2_err_reg;
reg              sp2_tchk_reg, sp2_tfit_bad_reg, sp2_frame_reg;
reg [5:0]        sp2_len6_reg;
reg [47:0]       sp2_to_hi_reg;        // TO[63:16]
reg [31:0]       sp2_to_hi_p1_reg;
reg [HDR_W-1:0]  sp2_tmpl_reg;
reg [CTX_W-1:0]  sp2_ctx_reg;

wire [32:0] sp1_off_hi = fadd({16'd0, sp1_len_hi_reg}, {16'd0, ~sp1_rem_hi_reg}, sp1_off_c_reg);
wire [32:0] sp1_sl = fadd({16'd0, sp1_c_reg}, {26'd0, hdr_len(sp1_hc_reg)}, 1'b0);
wire [32:0] sp1_to_lo = fadd({16'd0, sp1_to_reg[15:0]}, {16'd0, sp1_off_lo_reg}, 1'b0);

// --- sp3: TO (second quarter), beats, line-up with the input beats ----------

reg              sp3_valid_reg = 1'b0;
reg              sp3_last_reg;
reg              sp3_c_zero_reg;
reg              sp3_end_reg;          // the segment ends the message's payload
reg [15:0]       sp3_sl_reg;
reg [CNT_W-1:0]  sp3_cnt_reg;          // beats - 1
reg              sp3_mil_reg;          // the beat where the header ends is the last
reg [LG-1:0]     sp3_lb_reg;           // octets in the last beat, mod N
reg [LG-1:0]     sp3_a_reg;            // offset mod N: lane of the first payload octet in lo
reg [LG-1:0]     sp3_rot_reg;          // (offset - header length) mod N
reg [LG-1:0]     sp3_pn_m_reg;         // payload octets in the beat where the header ends
reg [31:0]       sp3_mo_reg;
reg [15:0]       sp3_to_lo_reg, sp3_to_mid_reg;
reg              sp3_to_c_reg;
reg [1:0]        sp3_hc_reg;
reg [3:0]        sp3_err_reg;
reg              sp3_tchk_reg, sp3_tfit_bad_reg, sp3_frame_reg;
reg [5:0]        sp3_len6_reg;
reg [31:0]       sp3_to_hi_reg;
reg [31:0]       sp3_to_hi_p1_reg;
reg [HDR_W-1:0]  sp3_tmpl_reg;
reg [CTX_W-1:0]  sp3_ctx_reg;

wire [32:0] sp2_to_mid = fadd({16'd0, sp2_to_hi_reg[15:0]}, {16'd0, sp2_off_hi_reg}, sp2_to_c_reg);
wire [32:0] sp2_sl_m1 = fadd({16'd0, sp2_sl_reg}, 32'h0000FFFF, 1'b0);

reg [LG-1:0] sp2_a;
reg [LG-1:0] sp2_room_m;     // payload room in the beat where the header ends: N - HM
reg [LG-1:0] sp2_pn_m;
reg          sp2_mil;

always @* begin
    sp2_a = sp2_off_lo_reg[LG-1:0];
    sp2_room_m = KEEP_W[LG-1:0] - hdr_hm(sp2_hc_reg);
    sp2_pn_m = sp2_c_reg < {{16-LG{1'b0}}, sp2_room_m} ? sp2_c_reg[LG-1:0] : sp2_room_m;
    case (sp2_hc_reg)
        HC_T: sp2_mil = sp2_sl_reg <= MIL_T;
        HC_U: sp2_mil = sp2_sl_reg <= MIL_U;
        default: sp2_mil = sp2_sl_reg <= MIL_R;
    endcase
end

// --- sp4: header, the beat plan (bg's input) --------------------------------

// A segment as bg takes it, packed (sp4, and the skid buffer bq after it).
localparam REC_W = 2 + 4 + 1 + 1 + 1 + 1 + 6 + CNT_W + 1 + HDR_W + 1 + LG + 3 * KEEP_W
    + 1 + 1 + 1 + 2 + 2 + USER_W;

reg              sp4_valid_reg = 1'b0;
reg [REC_W-1:0]  sp4_rec_reg;

reg [HDR_W-1:0]  sp3_hdr;
reg [63:0]       sp3_to;
reg [LG:0]       sp3_sum_m, sp3_pn_l, sp3_sum_l;
reg              sp3_hi_m, sp3_hi_l;
reg [1:0]        sp3_pops_m, sp3_pops_l;
reg [REC_W-1:0]  sp3_rec;

always @* begin
    sp3_to = {sp3_to_c_reg ? sp3_to_hi_p1_reg : sp3_to_hi_reg, sp3_to_mid_reg, sp3_to_lo_reg};
    sp3_hdr = sp3_tmpl_reg;
    sp3_hdr[6] = sp3_last_reg;                          // L
    if (sp3_hc_reg == HC_T) begin
        sp3_hdr[8*6 +: 64] = be64(sp3_to);              // TO
    end else begin
        sp3_hdr[8*14 +: 32] = be32(sp3_mo_reg);         // MO
    end
    // The beat where the header ends takes pn_m payload octets from lane a
    // of lo on: it needs hi if they run past lo, and is done with lo if they
    // reach its end. Payload beats start at lane rot; the last has pn_l
    // octets. The beat that ends the message's payload drops lo and, if it
    // used it, hi.
    sp3_sum_m = {1'b0, sp3_a_reg} + {1'b0, sp3_pn_m_reg};
    sp3_hi_m = sp3_sum_m > N_L;
    sp3_pn_l = sp3_lb_reg == {LG{1'b0}} ? N_L : {1'b0, sp3_lb_reg};
    sp3_sum_l = {1'b0, sp3_rot_reg} + sp3_pn_l;
    sp3_hi_l = sp3_sum_l > N_L;
    if (sp3_end_reg && sp3_mil_reg) begin
        sp3_pops_m = sp3_hi_m ? 2'd2 : 2'd1;
    end else begin
        sp3_pops_m = {1'b0, sp3_sum_m >= N_L};
    end
    if (sp3_end_reg) begin
        sp3_pops_l = sp3_hi_l ? 2'd2 : 2'd1;
    end else begin
        sp3_pops_l = {1'b0, sp3_sum_l >= N_L};
    end
    sp3_rec = {
        sp3_hc_reg, sp3_err_reg, sp3_err_reg != ERR_NONE, sp3_tchk_reg, sp3_tfit_bad_reg, sp3_frame_reg, sp3_len6_reg,
        sp3_cnt_reg, sp3_cnt_reg == {CNT_W{1'b0}}, sp3_hdr, sp3_c_zero_reg, sp3_rot_reg,
        lanes_from(sp3_a_reg), lanes_from(sp3_rot_reg), lanes_below(sp3_pn_l),
        sp3_hi_m, sp3_hi_l, sp3_rot_reg != {LG{1'b0}}, sp3_pops_m, sp3_pops_l,
        sp3_ctx_reg, sp3_sl_reg
    };
end

// --- bq: skid buffer between sp4 and bg -------------------------------------

// sp4's segment waits here when bg does not take it, so that sg..sp4
// advance on a register (en_s = !bq_valid) rather than on bg's decision.
reg              bq_valid_reg = 1'b0;
reg [REC_W-1:0]  bq_rec_reg;

assign en_s = !bq_valid_reg;

wire             bi_valid = bq_valid_reg || sp4_valid_reg;   // bg's input: bq first
wire [REC_W-1:0] bi_rec = bq_valid_reg ? bq_rec_reg : sp4_rec_reg;

wire [1:0]        bi_hc;
wire [3:0]        bi_err;
wire              bi_err_nz;
wire              bi_tchk, bi_tfit_bad, bi_frame;
wire [5:0]        bi_len6;
wire [CNT_W-1:0]  bi_cnt;
wire              bi_cnt_zero;
wire [HDR_W-1:0]  bi_hdr;
wire              bi_c_zero;
wire [LG-1:0]     bi_rot;
wire [KEEP_W-1:0] bi_mask_a, bi_mask_rot, bi_keep_last;
wire              bi_hi_m, bi_hi_l, bi_hi_mid;
wire [1:0]        bi_pops_m, bi_pops_l;
wire [USER_W-1:0] bi_user;

assign {bi_hc, bi_err, bi_err_nz, bi_tchk, bi_tfit_bad, bi_frame, bi_len6, bi_cnt, bi_cnt_zero, bi_hdr,
        bi_c_zero, bi_rot, bi_mask_a, bi_mask_rot, bi_keep_last, bi_hi_m, bi_hi_l, bi_hi_mid,
        bi_pops_m, bi_pops_l, bi_user} = bi_rec;

// --- bg: beat generator, window, issue --------------------------------------

// bg states: one flag each; none set is idle.
reg              bg_beat_reg = 1'b0;   // issuing the segment's beats
reg              bg_drop_reg = 1'b0;   // dropping a refused message's frame
reg              bg_tc1_reg = 1'b0;    // Terminate: wait for its first beat
reg              bg_tc2_reg = 1'b0;    // Terminate: check it
reg              bg_tc3_reg = 1'b0;    // Terminate: act on the check
reg              bg_any_reg = 1'b0;    // one of them

// The current beat.
reg              bg_in_hdr_reg;        // all header
reg              bg_in_mix_reg;        // the header ends in it
reg              bg_last_reg;          // the segment's last
reg              bg_need_lo_reg;       // it takes payload from lo
reg              bg_need_hi_reg;       // ... and from hi
reg [1:0]        bg_pops_reg;          // window beats it is done with
reg [CNT_W-1:0]  bg_cnt_reg;           // beats after it
reg [2:0]        bg_hcnt_reg;          // all-header beats left, this one included
reg [HDR_W-1:0]  bg_hsr_reg;           // header octets not sent yet, from lane 0
// The current segment.
reg [1:0]        bg_hc_reg;
reg              bg_c_zero_reg;
reg [LG-1:0]     bg_rot_reg;
reg [KEEP_W-1:0] bg_mask_a_reg, bg_mask_rot_reg, bg_keep_last_reg;
reg              bg_hi_m_reg, bg_hi_l_reg, bg_hi_mid_reg;
reg [1:0]        bg_pops_m_reg, bg_pops_l_reg;
reg [USER_W-1:0] bg_user_reg;
reg [5:0]        bg_len6_reg;
reg              bg_tfit_bad_reg;
reg [16:0]       bg_tc_fields_reg;
reg              bg_tc_ok_reg;

reg              err_valid_reg = 1'b0;
reg [3:0]        err_code_reg;
reg [CTX_W-1:0]  err_ctx_reg;

assign err_valid = err_valid_reg;
assign err_code = err_code_reg;
assign err_ctx = err_ctx_reg;

// Payload window: 4 beats in a ring; win_t[i]: more than i beats held.
reg [DATA_W-1:0] win0_reg, win1_reg, win2_reg, win3_reg;
reg [3:0]        win_last_reg;
reg [1:0]        win_wp_reg = 2'd0;
reg [1:0]        win_rp_reg = 2'd0, win_rp1_reg = 2'd1;
reg [3:0]        win_t_reg = 4'd0;
reg              s_axis_tready_reg = 1'b0;

assign s_axis_tready = s_axis_tready_reg;

// x1 and out stages.
reg              x1_valid_reg = 1'b0;
reg [DATA_W-1:0] x1_data_reg;
reg [LG-3:0]     x1_rot_hi_reg;
reg [KEEP_W-1:0] x1_hmask_reg;
reg [8*HDR_LANES-1:0] x1_hdr_reg;
reg [KEEP_W-1:0] x1_keep_reg;
reg              x1_last_reg;
reg [USER_W-1:0] x1_user_reg;

reg              out_valid_reg = 1'b0;
reg [DATA_W-1:0] out_data_reg;
reg [KEEP_W-1:0] out_keep_reg;
reg              out_last_reg;
reg [USER_W-1:0] out_user_reg;

assign m_axis_tvalid = out_valid_reg;
assign m_axis_tdata = out_data_reg;
assign m_axis_tkeep = out_keep_reg;
assign m_axis_tlast = out_last_reg;
assign m_axis_tuser = out_user_reg;

wire adv = !out_valid_reg || m_axis_tready;   // bg, x1, out advance
wire push = s_axis_tvalid && s_axis_tready_reg;

reg [63:0]       w0_lo64;  // lo (the beat holding the next payload octet), first 8 octets
reg [16:0]       w0_tc;    // what term_ok needs of them
reg              w0_last;  // lo is a frame's last beat
reg              issue;    // an output beat leaves bg
reg              drop_pop;
reg [1:0]        popc;     // beats leaving the window
reg              bg_free;  // bg is done: it takes bg's input segment, if any
reg              bg_sel_load;

always @* begin
    case (win_rp_reg)
        2'd0: w0_lo64 = win0_reg[63:0];
        2'd1: w0_lo64 = win1_reg[63:0];
        2'd2: w0_lo64 = win2_reg[63:0];
        default: w0_lo64 = win3_reg[63:0];
    endcase
    // A Terminate payload's Layer (octet 0), M, D and R flags (octet 2),
    // and the T bit and RDMAP opcode of a DDP header after the Terminate
    // Control (octets 4, 5) or after the DDP Segment Length (6, 7).
    w0_tc = {w0_lo64[7:4], w0_lo64[23:21], w0_lo64[39], w0_lo64[43:40], w0_lo64[55], w0_lo64[59:56]};
    w0_last = win_last_reg[win_rp_reg];

    issue = bg_beat_reg && adv && (!bg_need_lo_reg || win_t_reg[0])
        && (!bg_need_hi_reg || win_t_reg[1]);
    drop_pop = bg_drop_reg && win_t_reg[0];
    popc = issue ? bg_pops_reg : {1'b0, drop_pop};
    bg_free = !bg_any_reg || (issue && bg_last_reg) || (drop_pop && w0_last);
    // The beat registers load the next segment when bg is done with one
    // (bg_free), else step to the next beat (issue); which of the two is
    // known from registers alone.
    bg_sel_load = !bg_beat_reg || bg_last_reg;
end

// The next beat's plan: the first of a segment (from bg's input) or the
// one after the current beat.
reg              nb_in_hdr, nb_in_mix, nb_last, nb_need_lo, nb_need_hi;
reg [1:0]        nb_pops;
reg [CNT_W-1:0]  nb_cnt;
reg [2:0]        nb_hcnt;
reg [HDR_W-1:0]  nb_hsr;
reg              nb_mix_next, nb_last_next;

always @* begin
    nb_mix_next = bg_in_hdr_reg && bg_hcnt_reg == 3'd1;
    nb_last_next = bg_cnt_reg == {{CNT_W-1{1'b0}}, 1'b1};
    if (bg_sel_load) begin
        nb_hcnt = hdr_i0(bi_hc);
        nb_in_mix = nb_hcnt == 3'd0;
        nb_in_hdr = !nb_in_mix;
        nb_cnt = bi_cnt;
        nb_last = bi_cnt_zero;
        nb_hsr = bi_hdr;
        nb_need_lo = nb_in_mix && !bi_c_zero;
        nb_need_hi = nb_in_mix && bi_hi_m;
        nb_pops = nb_in_mix ? bi_pops_m : 2'd0;
    end else begin
        nb_hcnt = bg_hcnt_reg - 3'd1;
        nb_in_mix = nb_mix_next;
        nb_in_hdr = bg_in_hdr_reg && !nb_mix_next;
        nb_cnt = bg_cnt_reg - {{CNT_W-1{1'b0}}, 1'b1};
        nb_last = nb_last_next;
        nb_hsr = bg_hsr_reg;
        if (bg_in_hdr_reg) begin
            nb_hsr = bg_hsr_reg >> DATA_W;
            nb_need_lo = nb_mix_next && !bg_c_zero_reg;
            nb_need_hi = nb_mix_next && bg_hi_m_reg;
            nb_pops = nb_mix_next ? bg_pops_m_reg : 2'd0;
        end else begin
            nb_need_lo = 1'b1;
            nb_need_hi = nb_last_next ? bg_hi_l_reg : bg_hi_mid_reg;
            nb_pops = nb_last_next ? bg_pops_l_reg : 2'd1;
        end
    end
end

// x1: merge lo and hi, first rotation step.
reg [DATA_W-1:0] x1_merged;
reg [KEEP_W-1:0] x1_mask;
reg [1:0]        x1_sel;
reg [KEEP_W-1:0] bg_hmask;
reg [2*DATA_W-1:0] x1_twice;

integer b;

always @* begin
    x1_mask = bg_in_mix_reg ? bg_mask_a_reg : bg_mask_rot_reg;
    for (b = 0; b < KEEP_W; b = b + 1) begin
        x1_sel = x1_mask[b] ? win_rp_reg : win_rp1_reg;
        case (x1_sel)
            2'd0: x1_merged[8*b +: 8] = win0_reg[8*b +: 8];
            2'd1: x1_merged[8*b +: 8] = win1_reg[8*b +: 8];
            2'd2: x1_merged[8*b +: 8] = win2_reg[8*b +: 8];
            default: x1_merged[8*b +: 8] = win3_reg[8*b +: 8];
        endcase
    end
    x1_twice = {x1_merged, x1_merged} >> (8 * bg_rot_reg[1:0]);
    case (bg_hc_reg)
        HC_T: bg_hmask = lanes_below(HM_T);
        HC_U: bg_hmask = lanes_below(HM_U);
        default: bg_hmask = lanes_below(HM_R);
    endcase
    if (bg_in_hdr_reg) begin
        bg_hmask = {KEEP_W{1'b1}};
    end else if (!bg_in_mix_reg) begin
        bg_hmask = {KEEP_W{1'b0}};
    end
end

// out: rest of the rotation, header lanes.
reg [2*DATA_W-1:0] out_twice;
reg [DATA_W-1:0]   out_data_next;

always @* begin
    out_twice = {x1_data_reg, x1_data_reg} >> (32 * x1_rot_hi_reg);
    out_data_next = out_twice[DATA_W-1:0];
    for (b = 0; b < HDR_LANES; b = b + 1) begin
        if (x1_hmask_reg[b]) begin
            out_data_next[8*b +: 8] = x1_hdr_reg[8*b +: 8];
        end
    end
end

// Window: pointers, and the count (thermometer) moved by push - popc.
reg [3:0] win_t_next;
reg [1:0] win_rp_next;

always @* begin
    win_rp_next = win_rp_reg + popc;
    case ({push, popc})
        {1'b1, 2'd0}: win_t_next = {win_t_reg[2:0], 1'b1};
        {1'b0, 2'd1}, {1'b1, 2'd2}: win_t_next = {1'b0, win_t_reg[3:1]};
        {1'b0, 2'd2}: win_t_next = {2'b00, win_t_reg[3:2]};
        default: win_t_next = win_t_reg;
    endcase
end

// --- registers --------------------------------------------------------------

always @(posedge clk) begin
    // d1
    s_desc_ready_reg <= s_desc_ready_next;
    sk_valid_reg <= sk_valid_next;
    d1_valid_reg <= d1_valid_next;
    if (!d1_load && desc_acc) begin
        sk_reg <= s_desc;
    end
    if (d1_load) begin
        d1_reg <= sk_valid_reg ? sk_reg : s_desc;
    end

    // d2, d3
    if (en_d) begin
        d2_valid_reg <= d1_valid_reg;
        d2_tagged_reg <= d1_tagged;
        d2_rr_reg <= d1_rr;
        d2_term_reg <= d1_term;
        d2_e_op_reg <= d1_op[3];
        d2_e_inv_reg <= !d1_tagged && d1_op != OP_SEND_INV && d1_op != OP_SEND_SE_INV
            && d1_inv != 32'd0;
        d2_e_term_reg <= d1_term && (d1_len < 32'd4 || d1_len > 32'd52);
        d2_rr_nofit_reg <= d1_mulpdu < HL_R;
        d2_term_nofit_reg <= {1'b0, d1_mulpdu} < {11'd0, d1_len[5:0]} + HL_U;
        d2_e_mulpdu_reg <= d1_mulpdu <= (d1_tagged ? HL_T : HL_U);
        d2_c16_reg <= gt33({17'd0, d1_len[15:0]}, {17'd0, ~d1_to[15:0]});
        d2_gt_hi_reg <= gt33({17'd0, d1_len[31:16]}, {17'd0, ~d1_to[31:16]});
        d2_eq_hi_reg <= d1_len[31:16] == ~d1_to[31:16];
        d2_to_hi_ones_reg <= &d1_to[63:32];
        d2_to_47_ones_reg <= &d1_to[47:32];
        d2_p_reg <= d1_p[15:0];
        d2_len_reg <= d1_lm;
        d2_hi_m1_reg <= d1_hi_m1[13:0];
        d2_to_reg <= d1_to;
        d2_to_p1_lo_reg <= d1_to_p1_lo[15:0];
        d2_to_p1_hi_reg <= d1_to_p1_hi[15:0];
        d2_tmpl_reg <= d1_tmpl;
        d2_ctx_reg <= d1_ctx;

        d3_valid_reg <= d2_valid_reg;
        d3_hc_reg <= d2_rr_reg ? HC_R : d2_tagged_reg ? HC_T : HC_U;
        d3_err_reg <= d2_err;
        d3_tchk_reg <= d2_term_reg && !d2_e_inv_reg && !d2_e_term_reg;
        d3_tfit_bad_reg <= d2_term_nofit_reg;
        d3_frame_reg <= d2_len_reg != 32'd0;
        d3_last_reg <= d2_single
            || (d2_len_reg[31:16] == 16'd0 && !gt33({17'd0, d2_len_reg[15:0]}, {17'd0, d2_p_reg}));
        d3_p_reg <= d2_p_reg;
        d3_len_reg <= d2_len_reg;
        d3_hi_m1_reg <= d2_hi_m1_reg;
        d3_to_reg <= d2_to_reg;
        d3_to_hi_p1_reg <= {d2_to_47_ones_reg ? d2_to_p1_hi_reg : d2_to_reg[63:48], d2_to_p1_lo_reg};
        d3_tmpl_reg <= d2_tmpl_reg;
        d3_ctx_reg <= d2_ctx_reg;
    end

    // sg
    if (en_s && sg_take) begin
        sg_valid_reg <= d3_valid_reg;
        sg_last_reg <= d3_last_reg;
        sg_lo_reg <= d3_len_reg[17:0];
        sg_hi_reg <= d3_len_reg[31:18];
        sg_hi_m1_reg <= d3_hi_m1_reg;
        sg_p_reg <= d3_p_reg;
        sg_hc_reg <= d3_hc_reg;
        sg_err_reg <= d3_err_reg;
        sg_tchk_reg <= d3_tchk_reg;
        sg_tfit_bad_reg <= d3_tfit_bad_reg;
        sg_frame_reg <= d3_frame_reg;
        sg_len_reg <= d3_len_reg;
        sg_to_reg <= d3_to_reg;
        sg_to_hi_p1_reg <= d3_to_hi_p1_reg;
        sg_tmpl_reg <= d3_tmpl_reg;
        sg_ctx_reg <= d3_ctx_reg;
    end else if (en_s) begin
        // (sg_take is a register: the load/next choice is not behind en_s.)
        sg_last_reg <= sg_last_next;
        sg_lo_reg <= sg_lo_sub[17:0];
        sg_hi_reg <= sg_borrow ? sg_hi_m1_reg : sg_hi_reg;
        sg_hi_m1_reg <= sg_hi_dec[13:0];
    end

    if (en_s) begin
        // sp1
        sp1_valid_reg <= sg_valid_reg;
        sp1_last_reg <= sg_last_reg;
        sp1_c_reg <= sg_last_reg ? sg_lo_reg[15:0] : sg_p_reg;
        sp1_off_lo_reg <= sg_off_lo[15:0];
        sp1_off_c_reg <= sg_off_lo[16];
        sp1_rem_hi_reg <= {sg_hi_reg, sg_lo_reg[17:16]};
        sp1_hc_reg <= sg_hc_reg;
        sp1_err_reg <= sg_err_reg;
        sp1_tchk_reg <= sg_tchk_reg;
        sp1_tfit_bad_reg <= sg_tfit_bad_reg;
        sp1_frame_reg <= sg_frame_reg;
        sp1_len_hi_reg <= sg_len_reg[31:16];
        sp1_len6_reg <= sg_len_reg[5:0];
        sp1_to_reg <= sg_to_reg;
        sp1_to_hi_p1_reg <= sg_to_hi_p1_reg;
        sp1_tmpl_reg <= sg_tmpl_reg;
        sp1_ctx_reg <= sg_ctx_reg;

        // sp2
        sp2_valid_reg <= sp1_valid_reg;
        sp2_last_reg <= sp1_last_reg;
        sp2_c_reg <= sp1_c_reg;
        sp2_c_zero_reg <= sp1_c_reg == 16'd0;
        sp2_sl_reg <= sp1_sl[15:0];
        sp2_off_lo_reg <= sp1_off_lo_reg;
        sp2_off_hi_reg <= sp1_off_hi[15:0];
        sp2_to_lo_reg <= sp1_to_lo[15:0];
        sp2_to_c_reg <= sp1_to_lo[16];
        sp2_hc_reg <= sp1_hc_reg;
        sp2_err_reg <= sp1_err_reg;
        sp2_tchk_reg <= sp1_tchk_reg;
        sp2_tfit_bad_reg <= sp1_tfit_bad_reg;
        sp2_frame_reg <= sp1_frame_reg;
        sp2_len6_reg <= sp1_len6_reg;
        sp2_to_hi_reg <= sp1_to_reg[63:16];
        sp2_to_hi_p1_reg <= sp1_to_hi_p1_reg;
        sp2_tmpl_reg <= sp1_tmpl_reg;
        sp2_ctx_reg <= sp1_ctx_reg;

        // sp3
        sp3_valid_reg <= sp2_valid_reg;
        sp3_last_reg <= sp2_last_reg;
        sp3_c_zero_reg <= sp2_c_zero_reg;
        sp3_end_reg <= sp2_last_reg && !sp2_c_zero_reg;
        sp3_sl_reg <= sp2_sl_reg;
        sp3_cnt_reg <= sp2_sl_m1[15:LG];
        sp3_mil_reg <= sp2_mil;
        sp3_lb_reg <= sp2_sl_reg[LG-1:0];
        sp3_a_reg <= sp2_a;
        sp3_rot_reg <= sp2_a - hdr_hm(sp2_hc_reg);
        sp3_pn_m_reg <= sp2_pn_m;
        sp3_mo_reg <= {sp2_off_hi_reg, sp2_off_lo_reg};
        sp3_to_lo_reg <= sp2_to_lo_reg;
        sp3_to_mid_reg <= sp2_to_mid[15:0];
        sp3_to_c_reg <= sp2_to_mid[16];
        sp3_hc_reg <= sp2_hc_reg;
        sp3_err_reg <= sp2_err_reg;
        sp3_tchk_reg <= sp2_tchk_reg;
        sp3_tfit_bad_reg <= sp2_tfit_bad_reg;
        sp3_frame_reg <= sp2_frame_reg;
        sp3_len6_reg <= sp2_len6_reg;
        sp3_to_hi_reg <= sp2_to_hi_reg[47:16];
        sp3_to_hi_p1_reg <= sp2_to_hi_p1_reg;
        sp3_tmpl_reg <= sp2_tmpl_reg;
        sp3_ctx_reg <= sp2_ctx_reg;

        // sp4
        sp4_valid_reg <= sp3_valid_reg;
        sp4_rec_reg <= sp3_rec;
    end

    // bq
    if (bq_valid_reg) begin
        bq_valid_reg <= !bg_free;
    end else begin
        bq_valid_reg <= sp4_valid_reg && !bg_free;
        bq_rec_reg <= sp4_rec_reg;
    end

    // bg
    err_valid_reg <= 1'b0;
    if (bg_free || issue) begin
        bg_in_hdr_reg <= nb_in_hdr;
        bg_in_mix_reg <= nb_in_mix;
        bg_last_reg <= nb_last;
        bg_need_lo_reg <= nb_need_lo;
        bg_need_hi_reg <= nb_need_hi;
        bg_pops_reg <= nb_pops;
        bg_cnt_reg <= nb_cnt;
        bg_hcnt_reg <= nb_hcnt;
        bg_hsr_reg <= nb_hsr;
    end
    if (bg_free) begin
        bg_beat_reg <= 1'b0;
        bg_drop_reg <= 1'b0;
        bg_tc1_reg <= 1'b0;
        bg_tc2_reg <= 1'b0;
        bg_tc3_reg <= 1'b0;
        bg_any_reg <= 1'b0;
        if (bi_valid) begin
            bg_beat_reg <= !bi_err_nz && !bi_tchk;
            bg_drop_reg <= bi_err_nz && bi_frame;
            bg_tc1_reg <= !bi_err_nz && bi_tchk;
            bg_any_reg <= !bi_err_nz || bi_frame;
            err_valid_reg <= bi_err_nz;
            err_code_reg <= bi_err;
            err_ctx_reg <= bi_user[USER_W-1:16];
        end
        bg_hc_reg <= bi_hc;
        bg_c_zero_reg <= bi_c_zero;
        bg_rot_reg <= bi_rot;
        bg_mask_a_reg <= bi_mask_a;
        bg_mask_rot_reg <= bi_mask_rot;
        bg_keep_last_reg <= bi_keep_last;
        bg_hi_m_reg <= bi_hi_m;
        bg_hi_l_reg <= bi_hi_l;
        bg_hi_mid_reg <= bi_hi_mid;
        bg_pops_m_reg <= bi_pops_m;
        bg_pops_l_reg <= bi_pops_l;
        bg_user_reg <= bi_user;
        bg_len6_reg <= bi_len6;
        bg_tfit_bad_reg <= bi_tfit_bad;
    end else begin
        if (bg_tc1_reg && win_t_reg[0]) begin
            bg_tc_fields_reg <= w0_tc;
            bg_tc1_reg <= 1'b0;
            bg_tc2_reg <= 1'b1;
        end
        if (bg_tc2_reg) begin
            bg_tc_ok_reg <= term_ok(bg_tc_fields_reg, bg_len6_reg);
            bg_tc2_reg <= 1'b0;
            bg_tc3_reg <= 1'b1;
        end
        if (bg_tc3_reg) begin
            bg_tc3_reg <= 1'b0;
            if (!bg_tc_ok_reg || bg_tfit_bad_reg) begin
                bg_drop_reg <= 1'b1;
                err_valid_reg <= 1'b1;
                err_code_reg <= bg_tc_ok_reg ? ERR_NO_FIT : ERR_TERMINATE;
                err_ctx_reg <= bg_user_reg[USER_W-1:16];
            end else begin
                bg_beat_reg <= 1'b1;
            end
        end
    end

    // window
    if (push) begin
        case (win_wp_reg)
            2'd0: win0_reg <= s_axis_tdata;
            2'd1: win1_reg <= s_axis_tdata;
            2'd2: win2_reg <= s_axis_tdata;
            default: win3_reg <= s_axis_tdata;
        endcase
        win_last_reg[win_wp_reg] <= s_axis_tlast;
        win_wp_reg <= win_wp_reg + 2'd1;
    end
    win_rp_reg <= win_rp_next;
    win_rp1_reg <= win_rp_next + 2'd1;
    win_t_reg <= win_t_next;
    s_axis_tready_reg <= !win_t_next[3];

    // x1, out
    if (adv) begin
        x1_valid_reg <= issue;
        x1_data_reg <= x1_twice[DATA_W-1:0];
        x1_rot_hi_reg <= bg_rot_reg[LG-1:2];
        x1_hmask_reg <= bg_hmask;
        x1_hdr_reg <= bg_hsr_reg[8*HDR_LANES-1:0];
        x1_keep_reg <= bg_last_reg ? bg_keep_last_reg : {KEEP_W{1'b1}};
        x1_last_reg <= bg_last_reg;
        x1_user_reg <= bg_user_reg;

        out_valid_reg <= x1_valid_reg;
        out_data_reg <= out_data_next;
        out_keep_reg <= x1_keep_reg;
        out_last_reg <= x1_last_reg;
        out_user_reg <= x1_user_reg;
    end

    if (rst) begin
        s_desc_ready_reg <= 1'b0;
        sk_valid_reg <= 1'b0;
        d1_valid_reg <= 1'b0;
        d2_valid_reg <= 1'b0;
        d3_valid_reg <= 1'b0;
        sg_valid_reg <= 1'b0;
        sp1_valid_reg <= 1'b0;
        sp2_valid_reg <= 1'b0;
        sp3_valid_reg <= 1'b0;
        sp4_valid_reg <= 1'b0;
        bq_valid_reg <= 1'b0;
        bg_beat_reg <= 1'b0;
        bg_drop_reg <= 1'b0;
        bg_tc1_reg <= 1'b0;
        bg_tc2_reg <= 1'b0;
        bg_tc3_reg <= 1'b0;
        bg_any_reg <= 1'b0;
        err_valid_reg <= 1'b0;
        win_wp_reg <= 2'd0;
        win_rp_reg <= 2'd0;
        win_rp1_reg <= 2'd1;
        win_t_reg <= 4'd0;
        s_axis_tready_reg <= 1'b0;
        x1_valid_reg <= 1'b0;
        out_valid_reg <= 1'b0;
    end
end

// tkeep is not needed (len says where the payload ends), nor some bits of
// the adders' results.
wire unused_ok = &{1'b0, s_axis_tkeep, d1_p[32:16], d1_hi_m1[32:14], d1_to_p1_lo[32:16],
    d1_to_p1_hi[32:16], sg_lo_sub[32:19], sg_hi_dec[32:14], sg_off_lo[32:17],
    sp1_off_hi[32:16], sp1_sl[32:16], sp1_to_lo[32:17], sp2_to_mid[32:17], sp2_sl_m1[32:16],
    sp2_sl_m1[LG-1:0], x1_twice[2*DATA_W-1:DATA_W], out_twice[2*DATA_W-1:DATA_W],
    w0_lo64[63:60], w0_lo64[54:44], w0_lo64[38:24], w0_lo64[20:8], w0_lo64[3:0]};

endmodule

`resetall
