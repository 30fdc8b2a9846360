// rnic_tx: the iWARP transmit datapath, RDMAP messages in, MPA or TUF FPDUs
// out, DATA_W bits per clock: ddp_tx (DDP/RDMAP headers, MULPDU
// segmentation), then each segment to mpa_tx (ULPDU_Length, pad, markers,
// CRC32c) or tuf_tx (TUF header with the connection's key, CRC32c trailer;
// docs/tuf.md) by its connection's mode, octet for octet what
// iwarp/rdmap's Message.AppendSegments and iwarp/mpa's Framer, or
// iwarp/tuf's Sender without packing, send on each connection.
//
//   s_desc -> desc reg -+-> ddp_tx --> skid --> demux -+-> mpa_tx -+-> merge -> m_axis
//            flag table +                         |    +-> tuf_tx -+   ^
//   s_axis (payload) ------^                      +-> order queue -----+
//   DDP segments: tuser {tuf, crc_en, mrk_en, conn, len}
//   (ddp_tx's ctx = {tuf, crc_en, mrk_en, conn})
//
// Connections. A descriptor names its connection (s_desc_conn); everything
// else the framers need of the connection is configured once, through
// cfg_*, when it enters Full Operation (RFC 5044 7.1.2 settles markers and
// CRC for each half connection in the startup):
//   cfg_tuf     the connection's mode: 0 MPA, 1 TUF (docs/tuf.md);
//   cfg_key     its 48-bit TUF key (this side's, the one the peer checks;
//               draft-ietf-tsvwg-tcp-ulp-frame-01 4.1.1), written to
//               tuf_tx's key table; ignored by MPA connections;
//   cfg_pos     the marker position, as mpa_tx's: ((sequence number of the
//               next FPDU - marker base) mod 512) / 4, 0 when Full
//               Operation starts (MPA only);
//   cfg_mrk_en  markers on the connection's transmit half (MPA only);
//   cfg_crc_en  CRC on (off: the CRC field is zero; MPA only: TUF's
//               trailer is always on).
// A write (cfg_valid && cfg_ready) sets all five. The three flags live in
// a per-connection table (sdp_ram, 3 bits a connection) read when a
// descriptor is taken, and travel with the message as the top three bits
// of ddp_tx's ctx, so that ddp_tx's segment tuser {ctx, ulpdu_len} is,
// below the tuf bit, exactly mpa_tx's ULPDU tuser {crc_en, mrk_en, conn,
// len}; tuf_tx takes {conn, len}. Between ddp_tx and the framers there is
// a skid buffer (registered ready, so that the framers' ready paths do not
// run on into ddp_tx's stall logic) and the demultiplexer. The marker
// position is in mpa_tx's own table, the key in tuf_tx's.
// Configure a connection while it has nothing in flight (no descriptor
// taken whose FPDUs have not all left m_axis), and before its first
// descriptor: a write in the clock a descriptor of that connection is
// taken does not reach that descriptor. A connection may change mode this
// way between messages. cfg_ready is low only in a clock where mpa_tx
// updates its marker table (an FPDU's end).
//
// Descriptor, s_desc: ddp_tx's fields (opcode, stag, to, msn, inv_stag,
// len, rr_*, mulpdu; see ddp_tx.v) and conn in place of ctx. mulpdu is the
// caller's, per connection: for MPA at most 64768 (MPA's largest ULPDU,
// RFC 5044 3 / iwarp/mpa; a longer segment is refused by mpa_tx, mpa_err
// code 1, and lost); for TUF at most EMSS - 12 (tuf.MaxULPDU: TUF's MULPDU,
// EMSS - 8, draft 4.1.2, holds the 4-octet trailer too), so that each FPDU
// fits one TCP segment. Nothing here knows the EMSS: tuf_tx refuses only a
// segment its 16-bit Length cannot carry (over 65531 octets, tuf_err code
// 1, lost). The descriptor passes one register (where the flag table is
// read) before ddp_tx; s_desc_ready depends on registers only (no path
// from an input).
//
// Payload, s_axis: as ddp_tx's (one lane-0 aligned frame per message with
// a non-zero len, none for Read Requests; len decides, tkeep is ignored).
//
// Demultiplexer and merge. A segment's first beat picks mpa_tx or tuf_tx
// by its tuf bit and pushes that choice on the order queue (one bit a
// frame, 32 deep), except for a segment the block will drop (its length
// check, as the block's err bit 0), which makes no frame. The merge passes
// whole frames to m_axis from the block the queue's head names and pops
// the head at each frame's tlast, so m_axis carries FPDUs in the order
// their segments left ddp_tx, whichever block framed them. With the queue
// full a segment waits (32 frames in flight: more than the two blocks'
// pipelines hold at one beat a frame, so this costs nothing in the
// bench). The merge is a multiplexer on the blocks' output registers, no
// register of its own: m_axis_tready reaches the blocks' output stages
// through one AND.
//
// Output, m_axis: one frame per FPDU, lane-0 aligned, tkeep all ones but
// in the last beat; tuser = conn. MPA FPDUs are a multiple of four octets;
// TUF FPDUs are the segment + 12 octets (no pad). Frames of one connection
// come in message and segment order; connections interleave at FPDU
// boundaries, in descriptor order (across both modes: the order queue
// keeps the global order). A TCP transmitter cuts its segments at these
// boundaries (RFC 5044 8; for TUF each FPDU starts a TCP segment, draft
// 4.2).
//
// Errors:
//   ddp_err_valid, ddp_err_code, ddp_err_conn: ddp_tx's err_* (a descriptor
//     the Go stack refuses: nothing is sent for it, its payload is dropped;
//     codes 1..6 as in ddp_tx.v), with the message's connection.
//   mpa_err_valid, mpa_err_code: mpa_tx's err_* (bit 0: a segment of an
//     MPA connection longer than 64768 octets, i.e. mulpdu too large,
//     dropped; bit 1 cannot happen behind ddp_tx, whose segments are
//     always as long as their tuser says).
//   tuf_err_valid, tuf_err_code: tuf_tx's err_*, the same bits (bit 0: a
//     segment of a TUF connection longer than 65531 octets, dropped; bit 1
//     cannot happen here either).
//
// Throughput: one output beat per clock with descriptors and payload back
// to back and an always-ready sink, for every message size, on MPA
// connections and on TUF connections alike (the framers' output is the
// narrow point: they add headers, pad, CRC, markers or trailers to
// ddp_tx's segments, so ddp_tx waits now and then). Mixing the modes costs
// a little: when the head frame is in the block the other was feeding, the
// output waits for that block's pipeline, a few clocks at a switch (0.985
// output beats a clock at W=64 for 64-octet messages alternating between
// an MPA and a TUF connection, 0.996 for 1460 octets).
// Latency: from the clock edge that accepts a descriptor to the edge where
// its first FPDU beat can be taken, when the datapath is idle and the
// payload is there, at every width: 25 clocks for MPA, 1 (descriptor
// register) + 11 (ddp_tx) + 1 (skid buffer) + 12 (mpa_tx); 23 for TUF,
// with tuf_tx's 10 in place of mpa_tx's 12. Measured by
// tests/rnic_tx/test_rnic_tx.py, which writes them with the throughput to
// build/bench/rnic_tx-W<w>.json (TUF's and the mixed runs' under details).
//
// Verification: tests/rnic_tx/test_rnic_tx.py, every expected octet from
// the Go stack through cmd/rnic-oracle (rdmap_segments for the message's
// segments, then mpa_fpdus, or tuf_frames on TUF connections, for each
// connection's FPDUs), MPA and TUF connections in one run.

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
    input  wire                  cfg_tuf,
    input  wire [47:0]           cfg_key,

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
    output wire [1:0]            mpa_err_code,

    output wire                  tuf_err_valid,
    output wire [1:0]            tuf_err_code
);

localparam L = DATA_W / 8;
localparam CTX_W = CONN_W + 3;   // {tuf, crc_en, mrk_en, conn}: mpa_tx's tuser above len, and the mode
localparam ORD_AW = 5;           // the order queue holds 2**ORD_AW frames
localparam [16:0] MPA_MAX = 17'd64768;   // mpa_tx drops longer ULPDUs (its err bit 0)
localparam [16:0] TUF_MAX = 17'd65531;   // tuf_tx drops longer ULPDUs (its err bit 0)

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

// {tuf, crc_en, mrk_en} per connection, read at the edge that loads the
// descriptor register, so the word sits next to the descriptor.
wire mpa_cfg_ready;
assign cfg_ready = mpa_cfg_ready;
wire cfg_write = cfg_valid && mpa_cfg_ready;
wire [2:0] d_flags;

sdp_ram #(.WIDTH(3), .ADDR_W(CONN_W)) flag_table (
    .clk(clk),
    .wr_en(cfg_write),
    .wr_addr(cfg_conn),
    .wr_data({cfg_tuf, cfg_crc_en, cfg_mrk_en}),
    .rd_en(d_load),
    .rd_addr(s_desc_conn),
    .rd_data(d_flags)
);

// --- DDP/RDMAP segments --------------------------------------------------------

wire [DATA_W-1:0]   seg_data;
wire [L-1:0]        seg_keep;
wire                seg_valid, seg_ready, seg_last;
wire [CTX_W+15:0]   seg_user;   // {tuf, crc_en, mrk_en, conn, ulpdu_len}
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
wire [2:0] ddp_err_flags_unused = ddp_err_ctx[CTX_W-1:CONN_W];

// --- skid buffer: ddp_tx's m_axis_tready from a register ----------------------

// mpa_tx's s_axis_tready comes through its stages' handshakes (frame, mark,
// the CRC FIFO), and ddp_tx's m_axis_tready fans out into the stall logic
// of its whole pipeline; joined, the two make a path longer than either
// block's own. Two registers of a segment beat each (output and skid),
// s_ready registered: one beat per clock, one clock of latency.
// The top bit: the framer the segment goes to will drop it (its length
// check, err bit 0), worked out from ddp_tx's output registers so that the
// demultiplexer's valid comes from registers only.
localparam SK_W = DATA_W + L + 1 + CTX_W + 16 + 1;

reg              sk_s_ready_reg = 1'b0, sk_s_ready_next;
reg              sk_m_valid_reg = 1'b0, sk_m_valid_next;
reg              sk_t_valid_reg = 1'b0, sk_t_valid_next;
reg [SK_W-1:0]   sk_m_reg, sk_t_reg;
reg              sk_in_to_out, sk_in_to_tmp, sk_tmp_to_out;
wire             dm_ready;        // the demultiplexer takes sk_m_reg's beat

assign seg_ready = sk_s_ready_reg;
wire seg_drop = (seg_user[15:0] == 16'd0)
             || ({1'b0, seg_user[15:0]} > (seg_user[CTX_W+15] ? TUF_MAX : MPA_MAX));
wire [SK_W-1:0] sk_in = {seg_drop, seg_user, seg_last, seg_keep, seg_data};

always @* begin
    sk_m_valid_next = sk_m_valid_reg;
    sk_t_valid_next = sk_t_valid_reg;
    sk_in_to_out = 1'b0;
    sk_in_to_tmp = 1'b0;
    sk_tmp_to_out = 1'b0;
    // Ready next clock if the output moves on, or if the skid register
    // stays empty (nothing comes in now, or the output is free).
    sk_s_ready_next = dm_ready || (!sk_t_valid_reg && (!sk_m_valid_reg || !seg_valid));
    if (sk_s_ready_reg) begin
        if (dm_ready || !sk_m_valid_reg) begin
            sk_m_valid_next = seg_valid;
            sk_in_to_out = 1'b1;
        end else begin
            sk_t_valid_next = seg_valid;
            sk_in_to_tmp = 1'b1;
        end
    end else if (dm_ready) begin
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

// --- demultiplexer: each segment, whole, to mpa_tx or tuf_tx by its mode ----
//
// A segment's first beat picks the block by its tuf bit, held for its
// other beats. The first beat also pushes the block's number on the order
// queue, unless the block will drop the segment (its length check, err bit
// 0: no frame comes out for it); with the queue full the first beat waits.

wire [CTX_W+15:0] dm_user = sk_m_reg[DATA_W+L+1 +: CTX_W+16];
wire              dm_last = sk_m_reg[DATA_W+L];
reg               dm_in_seg = 1'b0;   // a segment's first beat has gone
reg               dm_route_reg = 1'b0;
wire              dm_first = !dm_in_seg;
wire              dm_route = dm_in_seg ? dm_route_reg : dm_user[CTX_W+15];
wire              dm_drop = sk_m_reg[SK_W-1];
reg               ord_full = 1'b0;
wire              dm_hold = dm_first && !dm_drop && ord_full;
wire              mpa_s_ready, tuf_s_ready;
wire              mpa_s_valid = sk_m_valid_reg && !dm_route && !dm_hold;
wire              tuf_s_valid = sk_m_valid_reg && dm_route && !dm_hold;
assign dm_ready = !dm_hold && (dm_route ? tuf_s_ready : mpa_s_ready);
wire              dm_take = sk_m_valid_reg && dm_ready;
wire              ord_push = dm_take && dm_first && !dm_drop;

always @(posedge clk) begin
    if (dm_take) begin
        dm_in_seg <= !dm_last;
        if (dm_first) begin
            dm_route_reg <= dm_user[CTX_W+15];
        end
    end
    if (rst) begin
        dm_in_seg <= 1'b0;
    end
end

// --- MPA framing, markers, CRC ---------------------------------------------------

wire [DATA_W-1:0] mpa_data, tuf_data;
wire [L-1:0]      mpa_keep, tuf_keep;
wire              mpa_valid, tuf_valid, mpa_last, tuf_last;
wire              mpa_ready, tuf_ready;
wire [CONN_W-1:0] mpa_user, tuf_user;

mpa_tx #(.DATA_W(DATA_W), .CONN_W(CONN_W)) mpa (
    .clk(clk), .rst(rst),
    .s_axis_tdata(sk_m_reg[DATA_W-1:0]), .s_axis_tkeep(sk_m_reg[DATA_W +: L]),
    .s_axis_tvalid(mpa_s_valid), .s_axis_tready(mpa_s_ready),
    .s_axis_tlast(dm_last), .s_axis_tuser(dm_user[CTX_W+14:0]),
    .cfg_valid(cfg_valid), .cfg_ready(mpa_cfg_ready), .cfg_conn(cfg_conn), .cfg_pos(cfg_pos),
    .m_axis_tdata(mpa_data), .m_axis_tkeep(mpa_keep), .m_axis_tvalid(mpa_valid),
    .m_axis_tready(mpa_ready), .m_axis_tlast(mpa_last), .m_axis_tuser(mpa_user),
    .err_valid(mpa_err_valid), .err_code(mpa_err_code)
);

// --- TUF framing: header with the key, CRC32c trailer -----------------------------

wire tuf_cfg_ready_unused;

tuf_tx #(.DATA_W(DATA_W), .CONN_W(CONN_W)) tuf (
    .clk(clk), .rst(rst),
    .s_axis_tdata(sk_m_reg[DATA_W-1:0]), .s_axis_tkeep(sk_m_reg[DATA_W +: L]),
    .s_axis_tvalid(tuf_s_valid), .s_axis_tready(tuf_s_ready),
    .s_axis_tlast(dm_last), .s_axis_tuser({dm_user[CONN_W+15:0]}),
    .cfg_valid(cfg_write), .cfg_ready(tuf_cfg_ready_unused), .cfg_conn(cfg_conn), .cfg_key(cfg_key),
    .m_axis_tdata(tuf_data), .m_axis_tkeep(tuf_keep), .m_axis_tvalid(tuf_valid),
    .m_axis_tready(tuf_ready), .m_axis_tlast(tuf_last), .m_axis_tuser(tuf_user),
    .err_valid(tuf_err_valid), .err_code(tuf_err_code)
);

// --- order queue and merge: whole frames, in the order segments went in ------
//
// One bit a frame (1: tuf_tx's), pushed by the demultiplexer, popped at the
// end of each output frame. The head picks the block m_axis takes from; the
// head's frame is always the oldest in either block, so it can always
// finish, and a block's frames come out in the order they went in.

reg [(1<<ORD_AW)-1:0] ord_mem = {(1<<ORD_AW){1'b0}};
reg [ORD_AW-1:0]      ord_wr = {ORD_AW{1'b0}}, ord_rd = {ORD_AW{1'b0}};
reg                   ord_empty = 1'b1;
// (ord_full, a register, is declared above: the demultiplexer reads it.)
reg  ord_head = 1'b0;   // ord_mem[ord_rd], or the bit being pushed into an empty queue
wire ord_pop = m_axis_tvalid && m_axis_tready && m_axis_tlast;

// Head, empty and full are registers, from the next pointers.
wire [ORD_AW-1:0] ord_wr_next = ord_wr + {{(ORD_AW-1){1'b0}}, ord_push};
wire [ORD_AW-1:0] ord_rd_next = ord_rd + {{(ORD_AW-1){1'b0}}, ord_pop};

always @(posedge clk) begin
    if (ord_push) begin
        ord_mem[ord_wr] <= dm_route;
    end
    ord_wr <= ord_wr_next;
    ord_rd <= ord_rd_next;
    ord_head <= (ord_push && ord_wr == ord_rd_next) ? dm_route : ord_mem[ord_rd_next];
    if (ord_push != ord_pop) begin
        ord_empty <= ord_pop && ord_wr_next == ord_rd_next;
        ord_full <= ord_push && ord_wr_next == ord_rd_next;
    end
    if (rst) begin
        ord_wr <= {ORD_AW{1'b0}};
        ord_rd <= {ORD_AW{1'b0}};
        ord_empty <= 1'b1;
        ord_full <= 1'b0;
    end
end

assign mpa_ready = m_axis_tready && !ord_empty && !ord_head;
assign tuf_ready = m_axis_tready && !ord_empty && ord_head;
assign m_axis_tvalid = !ord_empty && (ord_head ? tuf_valid : mpa_valid);
assign m_axis_tdata = ord_head ? tuf_data : mpa_data;
assign m_axis_tkeep = ord_head ? tuf_keep : mpa_keep;
assign m_axis_tlast = ord_head ? tuf_last : mpa_last;
assign m_axis_tuser = ord_head ? tuf_user : mpa_user;

endmodule

`resetall
