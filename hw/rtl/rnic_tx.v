// rnic_tx: the iWARP transmit datapath, RDMAP messages in, MPA FPDUs out,
// DATA_W bits per clock: ddp_tx (DDP/RDMAP headers, MULPDU segmentation)
// straight into mpa_tx (ULPDU_Length, pad, markers, CRC32c), octet for
// octet what iwarp/rdmap's Message.AppendSegments and iwarp/mpa's Framer
// send on each connection.
//
//   s_desc -> desc reg -+-> ddp_tx --> skid buffer --> mpa_tx -> m_axis
//            flag table +   DDP segments, tuser {crc_en, mrk_en, conn, len}
//   s_axis (payload) ------^   (ddp_tx's ctx = {crc_en, mrk_en, conn})
//
// Connections. A descriptor names its connection (s_desc_conn); everything
// else MPA needs of the connection is configured once, through cfg_*, when
// it enters Full Operation (RFC 5044 7.1.2 settles markers and CRC for each
// half connection in the startup):
//   cfg_pos     the marker position, as mpa_tx's: ((sequence number of the
//               next FPDU - marker base) mod 512) / 4, 0 when Full
//               Operation starts;
//   cfg_mrk_en  markers on the connection's transmit half;
//   cfg_crc_en  CRC on (off: the CRC field is zero).
// A write (cfg_valid && cfg_ready) sets all three. The two flags live in a
// per-connection table (sdp_ram, 2 bits a connection) read when a
// descriptor is taken, and travel with the message as the top two bits of
// ddp_tx's ctx, so that ddp_tx's segment tuser {ctx, ulpdu_len} is exactly
// mpa_tx's ULPDU tuser {crc_en, mrk_en, conn, len}: between the two blocks
// there is only a skid buffer (registered ready, so that mpa_tx's ready
// path does not run on into ddp_tx's stall logic). The marker position is
// in mpa_tx's own table.
// Configure a connection while it has nothing in flight (no descriptor
// taken whose FPDUs have not all left m_axis), and before its first
// descriptor: a write in the clock a descriptor of that connection is
// taken does not reach that descriptor. cfg_ready is low only in a clock
// where mpa_tx updates its marker table (an FPDU's end).
//
// Descriptor, s_desc: ddp_tx's fields (opcode, stag, to, msn, inv_stag,
// len, rr_*, mulpdu; see ddp_tx.v) and conn in place of ctx. mulpdu must be
// at most 64768 (MPA's largest ULPDU, RFC 5044 3 / iwarp/mpa): a longer
// segment is refused by mpa_tx (mpa_err code 1) and lost. The descriptor
// passes one register (where the flag table is read) before ddp_tx;
// s_desc_ready depends on registers only (no path from an input).
//
// Payload, s_axis: as ddp_tx's (one lane-0 aligned frame per message with
// a non-zero len, none for Read Requests; len decides, tkeep is ignored).
//
// Output, m_axis: one frame per FPDU, lane-0 aligned, a multiple of four
// octets, tkeep all ones but in the last beat; tuser = conn. Frames of one
// connection come in message and segment order; connections interleave at
// FPDU boundaries, in descriptor order. A TCP transmitter cuts its segments
// at these boundaries (RFC 5044 8).
//
// Errors:
//   ddp_err_valid, ddp_err_code, ddp_err_conn: ddp_tx's err_* (a descriptor
//     the Go stack refuses: nothing is sent for it, its payload is dropped;
//     codes 1..6 as in ddp_tx.v), with the message's connection.
//   mpa_err_valid, mpa_err_code: mpa_tx's err_* (bit 0: a segment longer
//     than 64768 octets, i.e. mulpdu too large, dropped; bit 1 cannot
//     happen behind ddp_tx, whose segments are always as long as their
//     tuser says).
//
// Throughput: one output beat per clock with descriptors and payload back
// to back and an always-ready sink, for every message size (mpa_tx's
// output is the narrow point: it adds the length field, pad, CRC and
// markers to ddp_tx's segments, so ddp_tx waits now and then).
// Latency: 25 clocks at every width from the clock edge that accepts a
// descriptor to the edge where its first FPDU beat can be taken, when the
// datapath is idle and the payload is there: 1 (descriptor register) + 11
// (ddp_tx) + 1 (skid buffer) + 12 (mpa_tx). Measured by
// tests/rnic_tx/test_rnic_tx.py, which writes it with the throughput to
// build/bench/rnic_tx-W<w>.json.
//
// Verification: tests/rnic_tx/test_rnic_tx.py, every expected octet from
// the Go stack through cmd/rnic-oracle (rdmap_segments for the message's
// segments, then mpa_fpdus for each connection's FPDUs).

`resetall
`timescale 1ns / 1ps
`default_nettype none

module rnic_tx #(
    parameter DATA_W = 64,
    parameter CONN_W = 10
) (
    input  wire                  clk,
    input  wire                  rst,

    input  wire                  s_desc_valid,
    output wire                  s_desc_ready,
    input  wire [3:0]            s_desc_opcode,
    input  wire [31:0]           s_desc_stag,
    input  wire [63:0]           s_desc_to,
    input  wire [31:0]           s_desc_msn,
    input  wire [31:0]           s_desc_inv_stag,
    input  wire [31:0]           s_desc_len,
    input  wire [31:0]           s_desc_rr_sink_stag,
    input  wire [63:0]           s_desc_rr_sink_to,
    input  wire [31:0]           s_desc_rr_size,
    input  wire [31:0]           s_desc_rr_src_stag,
    input  wire [63:0]           s_desc_rr_src_to,
    input  wire [15:0]           s_desc_mulpdu,
    input  wire [CONN_W-1:0]     s_desc_conn,

    input  wire [DATA_W-1:0]     s_axis_tdata,
    input  wire [DATA_W/8-1:0]   s_axis_tkeep,
    input  wire                  s_axis_tvalid,
    output wire                  s_axis_tready,
    input  wire                  s_axis_tlast,

    input  wire                  cfg_valid,
    output wire                  cfg_ready,
    input  wire [CONN_W-1:0]     cfg_conn,
    input  wire [6:0]            cfg_pos,
    input  wire                  cfg_mrk_en,
    input  wire                  cfg_crc_en,

    output wire [DATA_W-1:0]     m_axis_tdata,
    output wire [DATA_W/8-1:0]   m_axis_tkeep,
    output wire                  m_axis_tvalid,
    input  wire                  m_axis_tready,
    output wire                  m_axis_tlast,
    output wire [CONN_W-1:0]     m_axis_tuser,

    output wire                  ddp_err_valid,
    output wire [3:0]            ddp_err_code,
    output wire [CONN_W-1:0]     ddp_err_conn,

    output wire                  mpa_err_valid,
    output wire [1:0]            mpa_err_code
);

localparam L = DATA_W / 8;
localparam CTX_W = CONN_W + 2;   // {crc_en, mrk_en, conn}: mpa_tx's tuser above len

initial begin
    if (DATA_W != 64 && DATA_W != 128 && DATA_W != 256 && DATA_W != 512) begin
        $error("rnic_tx: DATA_W must be 64, 128, 256 or 512, got %0d", DATA_W);
        $finish;
    end
    if (CONN_W < 1) begin
        $error("rnic_tx: CONN_W must be at least 1, got %0d", CONN_W);
        $finish;
    end
end

// --- descriptor register, and the flag table read for it -----------------------

reg d_valid_reg = 1'b0, d_valid_next;
reg [3:0]        d_opcode;
reg [31:0]       d_stag;
reg [63:0]       d_to;
reg [31:0]       d_msn;
reg [31:0]       d_inv_stag;
reg [31:0]       d_len;
reg [31:0]       d_rr_sink_stag;
reg [63:0]       d_rr_sink_to;
reg [31:0]       d_rr_size;
reg [31:0]       d_rr_src_stag;
reg [63:0]       d_rr_src_to;
reg [15:0]       d_mulpdu;
reg [CONN_W-1:0] d_conn;

wire ddp_desc_ready;
assign s_desc_ready = !d_valid_reg || ddp_desc_ready;
wire d_load = s_desc_valid && s_desc_ready;

always @* begin
    d_valid_next = d_valid_reg;
    if (ddp_desc_ready) begin
        d_valid_next = 1'b0;
    end
    if (d_load) begin
        d_valid_next = 1'b1;
    end
end

always @(posedge clk) begin
    d_valid_reg <= d_valid_next;
    if (d_load) begin
        d_opcode <= s_desc_opcode;
        d_stag <= s_desc_stag;
        d_to <= s_desc_to;
        d_msn <= s_desc_msn;
        d_inv_stag <= s_desc_inv_stag;
        d_len <= s_desc_len;
        d_rr_sink_stag <= s_desc_rr_sink_stag;
        d_rr_sink_to <= s_desc_rr_sink_to;
        d_rr_size <= s_desc_rr_size;
        d_rr_src_stag <= s_desc_rr_src_stag;
        d_rr_src_to <= s_desc_rr_src_to;
        d_mulpdu <= s_desc_mulpdu;
        d_conn <= s_desc_conn;
    end
    if (rst) begin
        d_valid_reg <= 1'b0;
    end
end

// {crc_en, mrk_en} per connection, read at the edge that loads the
// descriptor register, so the word sits next to the descriptor.
wire mpa_cfg_ready;
assign cfg_ready = mpa_cfg_ready;
wire [1:0] d_flags;

sdp_ram #(.WIDTH(2), .ADDR_W(CONN_W)) flag_table (
    .clk(clk),
    .wr_en(cfg_valid && mpa_cfg_ready),
    .wr_addr(cfg_conn),
    .wr_data({cfg_crc_en, cfg_mrk_en}),
    .rd_en(d_load),
    .rd_addr(s_desc_conn),
    .rd_data(d_flags)
);

// --- DDP/RDMAP segments --------------------------------------------------------

wire [DATA_W-1:0]   seg_data;
wire [L-1:0]        seg_keep;
wire                seg_valid, seg_ready, seg_last;
wire [CTX_W+15:0]   seg_user;   // {crc_en, mrk_en, conn, ulpdu_len}
wire [CTX_W-1:0]    ddp_err_ctx;

ddp_tx #(.DATA_W(DATA_W), .CTX_W(CTX_W)) ddp (
    .clk(clk), .rst(rst),
    .s_desc_valid(d_valid_reg), .s_desc_ready(ddp_desc_ready),
    .s_desc_opcode(d_opcode), .s_desc_stag(d_stag), .s_desc_to(d_to),
    .s_desc_msn(d_msn), .s_desc_inv_stag(d_inv_stag), .s_desc_len(d_len),
    .s_desc_rr_sink_stag(d_rr_sink_stag), .s_desc_rr_sink_to(d_rr_sink_to),
    .s_desc_rr_size(d_rr_size), .s_desc_rr_src_stag(d_rr_src_stag),
    .s_desc_rr_src_to(d_rr_src_to), .s_desc_mulpdu(d_mulpdu),
    .s_desc_ctx({d_flags, d_conn}),
    .s_axis_tdata(s_axis_tdata), .s_axis_tkeep(s_axis_tkeep),
    .s_axis_tvalid(s_axis_tvalid), .s_axis_tready(s_axis_tready),
    .s_axis_tlast(s_axis_tlast),
    .m_axis_tdata(seg_data), .m_axis_tkeep(seg_keep), .m_axis_tvalid(seg_valid),
    .m_axis_tready(seg_ready), .m_axis_tlast(seg_last), .m_axis_tuser(seg_user),
    .err_valid(ddp_err_valid), .err_code(ddp_err_code), .err_ctx(ddp_err_ctx)
);

assign ddp_err_conn = ddp_err_ctx[CONN_W-1:0];
wire [1:0] ddp_err_flags_unused = ddp_err_ctx[CTX_W-1:CONN_W];

// --- skid buffer: ddp_tx's m_axis_tready from a register ----------------------

// mpa_tx's s_axis_tready comes through its stages' handshakes (frame, mark,
// the CRC FIFO), and ddp_tx's m_axis_tready fans out into the stall logic
// of its whole pipeline; joined, the two make a path longer than either
// block's own. Two registers of a segment beat each (output and skid),
// s_ready registered: one beat per clock, one clock of latency.
localparam SK_W = DATA_W + L + 1 + CTX_W + 16;

reg              sk_s_ready_reg = 1'b0, sk_s_ready_next;
reg              sk_m_valid_reg = 1'b0, sk_m_valid_next;
reg              sk_t_valid_reg = 1'b0, sk_t_valid_next;
reg [SK_W-1:0]   sk_m_reg, sk_t_reg;
reg              sk_in_to_out, sk_in_to_tmp, sk_tmp_to_out;
wire             mpa_s_ready;

assign seg_ready = sk_s_ready_reg;
wire [SK_W-1:0] sk_in = {seg_user, seg_last, seg_keep, seg_data};

always @* begin
    sk_m_valid_next = sk_m_valid_reg;
    sk_t_valid_next = sk_t_valid_reg;
    sk_in_to_out = 1'b0;
    sk_in_to_tmp = 1'b0;
    sk_tmp_to_out = 1'b0;
    // Ready next clock if the output moves on, or if the skid register
    // stays empty (nothing comes in now, or the output is free).
    sk_s_ready_next = mpa_s_ready || (!sk_t_valid_reg && (!sk_m_valid_reg || !seg_valid));
    if (sk_s_ready_reg) begin
        if (mpa_s_ready || !sk_m_valid_reg) begin
            sk_m_valid_next = seg_valid;
            sk_in_to_out = 1'b1;
        end else begin
            sk_t_valid_next = seg_valid;
            sk_in_to_tmp = 1'b1;
        end
    end else if (mpa_s_ready) begin
        sk_m_valid_next = sk_t_valid_reg;
        sk_t_valid_next = 1'b0;
        sk_tmp_to_out = 1'b1;
    end
end

always @(posedge clk) begin
    sk_s_ready_reg <= sk_s_ready_next;
    sk_m_valid_reg <= sk_m_valid_next;
    sk_t_valid_reg <= sk_t_valid_next;
    if (sk_in_to_out) begin
        sk_m_reg <= sk_in;
    end else if (sk_tmp_to_out) begin
        sk_m_reg <= sk_t_reg;
    end
    if (sk_in_to_tmp) begin
        sk_t_reg <= sk_in;
    end
    if (rst) begin
        sk_s_ready_reg <= 1'b0;
        sk_m_valid_reg <= 1'b0;
        sk_t_valid_reg <= 1'b0;
    end
end

// --- MPA framing, markers, CRC ---------------------------------------------------

mpa_tx #(.DATA_W(DATA_W), .CONN_W(CONN_W)) mpa (
    .clk(clk), .rst(rst),
    .s_axis_tdata(sk_m_reg[DATA_W-1:0]), .s_axis_tkeep(sk_m_reg[DATA_W +: L]),
    .s_axis_tvalid(sk_m_valid_reg), .s_axis_tready(mpa_s_ready),
    .s_axis_tlast(sk_m_reg[DATA_W+L]), .s_axis_tuser(sk_m_reg[DATA_W+L+1 +: CTX_W+16]),
    .cfg_valid(cfg_valid), .cfg_ready(mpa_cfg_ready), .cfg_conn(cfg_conn), .cfg_pos(cfg_pos),
    .m_axis_tdata(m_axis_tdata), .m_axis_tkeep(m_axis_tkeep), .m_axis_tvalid(m_axis_tvalid),
    .m_axis_tready(m_axis_tready), .m_axis_tlast(m_axis_tlast), .m_axis_tuser(m_axis_tuser),
    .err_valid(mpa_err_valid), .err_code(mpa_err_code)
);

endmodule

`resetall
