// ddp_rx: DDP/RDMAP receive placement, DATA_W bits per clock.
//
// Takes the ULPDUs (DDP Segments) that mpa_rx finds, as pieces, checks each
// one's DDP header (RFC 5041 4, 7.1) and RDMAP control (RFC 5040) the way
// iwarp/verbs' receive path does (ddp.ParseHeader, rdmap.ClassifyHeader,
// ddp.Sink.Receive, rdmap.Invalidate, rdmap.ParseReadRequest), writes the
// payload of every segment that passes into host memory through an AXI4
// write master, and reports completions and errors in stream order once
// MPA's verdict on the ULPDU is good.
//
// Input, s_axis (the ULPDU pieces, hw/README.md "MPA receive path"): one
// frame per piece, lane-0 aligned, tuser = {ulpdu_len[15:0], conn, first,
// last}. The low CONN_W+2 bits are the README's; ulpdu_len, the ULPDU's
// whole length (MPA's ULPDU_Length, which mpa_rx reads before the first
// octet), is this block's addition and the same on every piece of the
// ULPDU: without it no bounds or length check of 7.1 could be made before
// the first piece is written. The first piece of a ULPDU holds at least 46
// octets, or the whole ULPDU.
//
// Input, s_verdict: one per ULPDU, in the order of the ULPDUs' last pieces,
// after the last piece; tdata = MPA code (0 good, 2 CRC, 3 marker/length),
// tuser = conn. Verdicts gate delivery only (cut-through placement).
//
// Host memory, m_axi_*: AXI4 write master, INCR bursts of at most BURST
// beats of DATA_W bits, aligned to BURST beats (so never across 4 KiB),
// data rotated to the host address, byte strobes exact. A burst is issued
// at its first beat with its length up to the end of the ULPDU's payload;
// where a piece ends inside a burst the rest of the burst is sent with
// zero strobes. W beats wait for their burst's AW handshake. B responses
// are checked: the block keeps the connection of each burst whose B
// response is outstanding (2^BQ_AW of them at most; placement waits when
// that many are out), a ULPDU's completion or error waits for the B
// responses of all its bursts, and an error response (SLVERR, DECERR) to a
// burst of a connection is that stream's error: its next report (the
// ULPDU that wrote the burst) is an RDMAP Local Catastrophic Error (layer
// 0, type 0, code 0) in place of its completion or error, unless its MPA
// verdict is bad, and nothing of the stream is placed once the response is
// in (ULPDUs the block had already started on finish). BREADY is held low
// for a response past the oldest undelivered ULPDU's bursts until that
// ULPDU is delivered, so a response is charged to the right ULPDU.
//
// Configuration (valid/ready each, taken between pieces, in priority
// conn > stag > post; each takes effect for the pieces after it):
//   s_conn:  conn, enable, pd. (Re)starts a connection: enable, PD, every
//            queue empty with MSN 1 next (RFC 5041 4.3), no error. A
//            disabled (or never configured) connection places nothing and
//            reports nothing on m_cpl/m_err, whatever the verdicts; each of
//            its pieces is reported on m_drop.
//   s_stag:  index (STag >> 8), entry_valid, key (STag[7:0]), pd, bound
//            and conn (stream binding: only that connection may use it),
//            access (bit 0 remote write, bit 1 remote read, as
//            ddp.Access), base (TO of the first octet), len, addr (host
//            address of the first octet). Overwrites the entry; writing
//            entry_valid = 0 invalidates it.
//   s_post:  conn, qn (0 Send, 1 Read Request, 2 Terminate), addr, len,
//            id: posts a receive buffer at the tail of the queue's ring
//            (2^RQ_AW deep). A post to a full ring, to QN 3 or to a
//            connection that is not enabled is refused (s_post_ready is
//            not affected): the ring is unchanged and m_post_err reports
//            it.
//
// Outputs, one event per delivered message or stream error, in each
// connection's stream order (registered valid/ready):
//   m_cpl: conn, opcode, tagged; for a tagged message (RDMA Write, Read
//          Response, on its last segment) its STag; for an untagged one
//          qn, msn, len (ULP Message Length: MO + payload of the last
//          segment, 5.4), id of the posted buffer, inv_stag for a Send
//          with Invalidate (the STag is invalid from then on), and for a
//          Read Request its 28-octet body in rr (octet j in rr[8j+7:8j]):
//          the payload of its last segment. A Terminate is delivered as a
//          completion on QN 2 (its payload is in the posted buffer) and
//          ends the stream without an error.
//   m_err: conn, layer, etype, code as rdmap.ErrorFrom reports the first
//          error of the stream (RFC 5040 7, RFC 5041 7.2), or layer 2
//          (LLP) type 0 with the MPA code for a bad verdict. Nothing of the
//          stream is placed after the erring ULPDU's header, and nothing is
//          reported after the error.
//
// Status outputs, one-clock pulses without ready (sample every clock):
//   m_drop:     a piece of a connection that is not enabled was dropped:
//               conn, reason (1: not enabled), first (the piece is a
//               ULPDU's first); m_drop_count counts them (wraps).
//   m_post_err: a post was refused: conn, qn, id, reason (1 ring full, 2
//               QN 3, 3 connection not enabled).
//   m_berr:     an error B response: the burst's conn and BRESP.
//
// Order of the checks, on the first piece of each ULPDU, and their
// errors (layer/etype/code):
//   ULPDU shorter than its DDP header (14/18 octets) 0/2/7
//   DV != 1                         1/1/4 tagged, 1/2/6 untagged
//   RV != 1                         0/2/5
//   opcode > 7, or tagged opcode in an untagged segment or the reverse
//                                   0/2/6
//   untagged QN > 2                 1/2/1; QN not the opcode's 0/2/6
//   tagged, payload not empty: STag index/key/valid 1/1/0; PD or stream
//     binding 1/1/2; no remote write access 0/1/2; TO + length wraps 1/1/3;
//     outside base..base+len 1/1/1
//   untagged: MSN not posted (ahead of the window) 1/2/2, behind the
//     window 1/2/3; MO > buffer 1/2/4; MO + length > buffer 1/2/5; last
//     segment not of the oldest MSN 1/2/3
//   on the last segment: Read Request of a length other than 28 0/2/7;
//     Send with Invalidate of an STag not valid or not of this stream's
//     PD/binding 0/1/9.
// Effects take place in the order of the ULPDUs' first pieces, whatever
// their verdicts: the placement, the queue's advance to the next MSN, the
// invalidation of a Send with Invalidate's STag, the end of placement
// after an error or a Terminate. A ULPDU of another connection that is
// already being placed finishes through an STag invalidated meanwhile.
//
// Throughput: one input beat per clock within a piece; each piece costs
// about 9 more clocks (first pieces: context read, header, three check
// stages, set-up, flush, context write) or 5 (later pieces). Measured
// (tests/ddp_rx bench, one-piece RDMA Writes back to back): 0.99 beats per
// clock at 9000 octets, 0.95 / 0.73 at 1460 (W = 64 / 512), 0.62 / 0.25
// at 128 octets; 0.05 / 0.09 segments per clock at 64 octets.
// Latency: 13 clocks at W = 64, 11 at W = 128, 10 at W >= 256, from the
// clock a first piece's first beat is offered to its first W beat (AW one
// clock earlier).
//
// Verification: tests/ddp_rx/test_ddp_rx.py, every expected octet of host
// memory, completion and error from iwarp/ddp and iwarp/rdmap through
// cmd/rnic-oracle (op ddp_place).

`resetall
`timescale 1ns / 1ps
`default_nettype none

module ddp_rx #(
    parameter DATA_W = 64,
    parameter CONN_W = 10,
    parameter STAG_AW = 12,
    parameter RQ_AW = 3,
    parameter ADDR_W = 64,
    parameter ID_W = 32,
    parameter BURST = 8,
    parameter REC_AW = 3,
    parameter BQ_AW = 4
) (
    input  wire                    clk,
    input  wire                    rst,

    input  wire [DATA_W-1:0]       s_axis_tdata,
    input  wire [DATA_W/8-1:0]     s_axis_tkeep,
    input  wire                    s_axis_tvalid,
    output wire                    s_axis_tready,
    input  wire                    s_axis_tlast,
    input  wire [CONN_W+18-1:0]    s_axis_tuser,

    input  wire [2:0]              s_verdict_tdata,
    input  wire [CONN_W-1:0]       s_verdict_tuser,
    input  wire                    s_verdict_tvalid,
    output wire                    s_verdict_tready,

    input  wire                    s_conn_valid,
    output wire                    s_conn_ready,
    input  wire [CONN_W-1:0]       s_conn_conn,
    input  wire                    s_conn_enable,
    input  wire [31:0]             s_conn_pd,

    input  wire                    s_stag_valid,
    output wire                    s_stag_ready,
    input  wire [STAG_AW-1:0]      s_stag_index,
    input  wire                    s_stag_entry_valid,
    input  wire [7:0]              s_stag_key,
    input  wire [31:0]             s_stag_pd,
    input  wire                    s_stag_bound,
    input  wire [CONN_W-1:0]       s_stag_conn,
    input  wire [1:0]              s_stag_access,
    input  wire [63:0]             s_stag_base,
    input  wire [31:0]             s_stag_len,
    input  wire [ADDR_W-1:0]       s_stag_addr,

    input  wire                    s_post_valid,
    output wire                    s_post_ready,
    input  wire [CONN_W-1:0]       s_post_conn,
    input  wire [1:0]              s_post_qn,
    input  wire [ADDR_W-1:0]       s_post_addr,
    input  wire [31:0]             s_post_len,
    input  wire [ID_W-1:0]         s_post_id,

    output wire [0:0]              m_axi_awid,
    output wire [ADDR_W-1:0]       m_axi_awaddr,
    output wire [7:0]              m_axi_awlen,
    output wire [2:0]              m_axi_awsize,
    output wire [1:0]              m_axi_awburst,
    output wire [3:0]              m_axi_awcache,
    output wire [2:0]              m_axi_awprot,
    output wire                    m_axi_awvalid,
    input  wire                    m_axi_awready,
    output wire [DATA_W-1:0]       m_axi_wdata,
    output wire [DATA_W/8-1:0]     m_axi_wstrb,
    output wire                    m_axi_wlast,
    output wire                    m_axi_wvalid,
    input  wire                    m_axi_wready,
    input  wire [0:0]              m_axi_bid,
    input  wire [1:0]              m_axi_bresp,
    input  wire                    m_axi_bvalid,
    output wire                    m_axi_bready,

    output wire                    m_cpl_valid,
    input  wire                    m_cpl_ready,
    output wire [CONN_W-1:0]       m_cpl_conn,
    output wire [3:0]              m_cpl_opcode,
    output wire                    m_cpl_tagged,
    output wire [1:0]              m_cpl_qn,
    output wire [31:0]             m_cpl_msn,
    output wire [31:0]             m_cpl_len,
    output wire [ID_W-1:0]         m_cpl_id,
    output wire [31:0]             m_cpl_stag,
    output wire [31:0]             m_cpl_inv_stag,
    output wire [223:0]            m_cpl_rr,

    output wire                    m_err_valid,
    input  wire                    m_err_ready,
    output wire [CONN_W-1:0]       m_err_conn,
    output wire [3:0]              m_err_layer,
    output wire [3:0]              m_err_etype,
    output wire [7:0]              m_err_code,

    // Status pulses (one clock each, no ready: sample them every clock).
    output wire                    m_drop_valid,
    output wire [CONN_W-1:0]       m_drop_conn,
    output wire [1:0]              m_drop_reason,
    output wire                    m_drop_first,
    output wire [31:0]             m_drop_count,
    output wire                    m_post_err_valid,
    output wire [CONN_W-1:0]       m_post_err_conn,
    output wire [1:0]              m_post_err_qn,
    output wire [ID_W-1:0]         m_post_err_id,
    output wire [1:0]              m_post_err_reason,
    output wire                    m_berr_valid,
    output wire [CONN_W-1:0]       m_berr_conn,
    output wire [1:0]              m_berr_resp
);

localparam KEEP_W = DATA_W / 8;               // lanes, N
localparam LG = $clog2(KEEP_W);
localparam HB = (18 + KEEP_W - 1) / KEEP_W;   // beats that hold an untagged header
localparam HBC_W = 2;                         // counts 0..HB (HB <= 3)
localparam BW = $clog2(BURST);
localparam NCONN = 1 << CONN_W;
localparam RG_AW = CONN_W + 2 + RQ_AW;        // {conn, qn, slot}
localparam integer KEEP_WI = KEEP_W;
localparam [17:0] N18 = KEEP_WI[17:0];
localparam [ADDR_W-1:0] N_A = {{(ADDR_W-LG-1){1'b0}}, 1'b1, {LG{1'b0}}};   // N, as an address step

// Per-queue state: {first MSN, head slot, count}.
localparam Q_W = 32 + RQ_AW + RQ_AW + 1;
// Delivery record of a ULPDU: {kind, opcode, tagged, qn, msn, len, id,
// stag, inv_stag, layer, etype, code}.
localparam RECC_W = 2 + 4 + 1 + 2 + 32 + 32 + ID_W + 32 + 32 + 4 + 4 + 8;
// Connection context: {enable, pd, fail, q2, q1, q0, place, nxt, remain, rec}.
localparam CX_W = 1 + 32 + 1 + 3 * Q_W + 1 + ADDR_W + 16 + RECC_W;
// STag entry: {valid, key, pd, bound, conn, access, base, len, addr}.
localparam ST_W = 1 + 8 + 32 + 1 + CONN_W + 2 + 64 + 32 + ADDR_W;
// Posted buffer: {addr, len, id}.
localparam RG_W = ADDR_W + 32 + ID_W;
localparam MK_W = BQ_AW + 1;                 // burst counts, modulo 2^MK_W
localparam RF_W = 1 + MK_W + CONN_W + RECC_W + 224;    // {enabled, mark, conn, rec, rr}

localparam [1:0] K_NONE = 2'd0, K_CPL = 2'd1, K_ERR = 2'd2, K_TERM = 2'd3;

localparam [3:0] S_IDLE = 4'd0, S_CTX = 4'd1, S_HDR = 4'd2, S_CHK1 = 4'd3, S_CHK2 = 4'd4,
                 S_CHK3 = 4'd5, S_SET = 4'd6, S_DATA = 4'd7, S_FLUSH = 4'd8, S_PAD = 4'd9,
                 S_END = 4'd10, S_POST = 4'd11;

initial begin
    if (DATA_W != 64 && DATA_W != 128 && DATA_W != 256 && DATA_W != 512) begin
        $error("ddp_rx: DATA_W must be 64, 128, 256 or 512, got %0d", DATA_W);
        $finish;
    end
    if (CONN_W < 1 || CONN_W > 16) begin
        $error("ddp_rx: CONN_W must be 1..16, got %0d", CONN_W);
        $finish;
    end
    if (STAG_AW < 1 || STAG_AW > 20) begin
        $error("ddp_rx: STAG_AW must be 1..20, got %0d", STAG_AW);
        $finish;
    end
    if (RQ_AW < 1 || RQ_AW > 8) begin
        $error("ddp_rx: RQ_AW must be 1..8, got %0d", RQ_AW);
        $finish;
    end
    if (ADDR_W < 16 || ADDR_W > 64) begin
        $error("ddp_rx: ADDR_W must be 16..64, got %0d", ADDR_W);
        $finish;
    end
    if (ID_W < 1 || ID_W > 64) begin
        $error("ddp_rx: ID_W must be 1..64, got %0d", ID_W);
        $finish;
    end
    if (BURST < 2 || BURST > 256 || (BURST & (BURST - 1)) != 0 || BURST * KEEP_W > 4096) begin
        $error("ddp_rx: BURST must be a power of 2, 2..256, at most 4096 octets, got %0d", BURST);
        $finish;
    end
    if (REC_AW < 1 || REC_AW > 8) begin
        $error("ddp_rx: REC_AW must be 1..8, got %0d", REC_AW);
        $finish;
    end
    if (BQ_AW < 1 || BQ_AW > 7) begin
        $error("ddp_rx: BQ_AW must be 1..7, got %0d", BQ_AW);
        $finish;
    end
end

// --- helpers ----------------------------------------------------------------

// Big-endian field of 4 octets starting at octet o of the header (RFC 5041
// 4: fields are in network order, octet 0 in lane 0).
function [31:0] be32(input [18*8-1:0] h, input integer o);
    be32 = {h[8*o +: 8], h[8*(o+1) +: 8], h[8*(o+2) +: 8], h[8*(o+3) +: 8]};
endfunction

// Lanes at or above lo and below hi (0 <= lo, hi <= N).
function [KEEP_W-1:0] lane_window(input [LG:0] lo, input [LG:0] hi);
    integer b;
    begin
        for (b = 0; b < KEEP_W; b = b + 1) begin
            lane_window[b] = b >= lo && b < hi;
        end
    end
endfunction

// Octets in a tkeep that is a run from lane 0.
function [LG:0] keep_count(input [KEEP_W-1:0] k);
    integer b;
    begin
        keep_count = 0;
        for (b = 0; b < KEEP_W; b = b + 1) begin
            if (k[b]) begin
                keep_count = b[LG:0] + 1'b1;
            end
        end
    end
endfunction

// g - base, clamped to 0..N.
function [LG:0] clamp_lanes(input [17:0] g, input [17:0] base);
    begin
        if (g <= base) begin
            clamp_lanes = 0;
        end else if (g - base >= N18) begin
            clamp_lanes = KEEP_WI[LG:0];
        end else begin
            clamp_lanes = g[LG:0] - base[LG:0];
        end
    end
endfunction

// --- tables -----------------------------------------------------------------

reg                  cx_wr_en;
reg  [CONN_W-1:0]    cx_wr_addr;
reg  [CX_W-1:0]      cx_wr_data;
reg                  cx_rd_en;
reg  [CONN_W-1:0]    cx_rd_addr;
wire [CX_W-1:0]      cx_rd_data;

// A Read Request's body (octets 18..45 of its ULPDU), kept per connection
// from the first piece that carried it to the ULPDU's last piece, where
// the delivery record takes it: another connection's pieces may come in
// between (the last piece can be an empty one, sent when a segment ended
// between the ULPDU and its CRC). Read together with ctx_ram.
wire [223:0]         rb_rd_data;
sdp_ram #(.WIDTH(224), .ADDR_W(CONN_W)) rrbody_ram (
    .clk(clk),
    .wr_en(cx_wr_en && state_reg == S_END && !p_last_reg), .wr_addr(p_conn_reg), .wr_data(d_rr_reg),
    .rd_en(cx_rd_en), .rd_addr(cx_rd_addr), .rd_data(rb_rd_data)
);

sdp_ram #(.WIDTH(CX_W), .ADDR_W(CONN_W)) ctx_ram (
    .clk(clk),
    .wr_en(cx_wr_en), .wr_addr(cx_wr_addr), .wr_data(cx_wr_data),
    .rd_en(cx_rd_en), .rd_addr(cx_rd_addr), .rd_data(cx_rd_data)
);

reg                  st_wr_en;
reg  [STAG_AW-1:0]   st_wr_addr;
reg  [ST_W-1:0]      st_wr_data;
reg                  st_rd_en;
reg  [STAG_AW-1:0]   st_rd_addr;
wire [ST_W-1:0]      st_rd_data;

sdp_ram #(.WIDTH(ST_W), .ADDR_W(STAG_AW)) stag_ram (
    .clk(clk),
    .wr_en(st_wr_en), .wr_addr(st_wr_addr), .wr_data(st_wr_data),
    .rd_en(st_rd_en), .rd_addr(st_rd_addr), .rd_data(st_rd_data)
);

reg                  rg_wr_en;
reg  [RG_AW-1:0]     rg_wr_addr;
reg  [RG_W-1:0]      rg_wr_data;
reg                  rg_rd_en;
reg  [RG_AW-1:0]     rg_rd_addr;
wire [RG_W-1:0]      rg_rd_data;

sdp_ram #(.WIDTH(RG_W), .ADDR_W(RG_AW)) ring_ram (
    .clk(clk),
    .wr_en(rg_wr_en), .wr_addr(rg_wr_addr), .wr_data(rg_wr_data),
    .rd_en(rg_rd_en), .rd_addr(rg_rd_addr), .rd_data(rg_rd_data)
);

// --- output queues ----------------------------------------------------------

reg                       aw_in_valid;
reg  [ADDR_W+8-1:0]       aw_in_data;
wire                      aw_in_ready;
wire [ADDR_W+8-1:0]       aw_out_data;
wire                      aw_out_valid;

ddp_rx_fifo #(.WIDTH(ADDR_W + 8), .AW(2)) aw_fifo (
    .clk(clk), .rst(rst),
    .in_data(aw_in_data), .in_valid(aw_in_valid), .in_ready(aw_in_ready),
    .out_data(aw_out_data), .out_valid(aw_out_valid), .out_ready(m_axi_awready)
);

reg                           w_in_valid;
reg  [DATA_W+KEEP_W:0]        w_in_data;
wire                          w_in_ready;
wire [DATA_W+KEEP_W:0]        w_out_data;
wire                          w_out_valid;
reg  [3:0]                    w_credit_reg = 4'd0;   // AWs sent whose last W beat is not

wire w_go = w_out_valid && w_credit_reg != 4'd0;

ddp_rx_fifo #(.WIDTH(DATA_W + KEEP_W + 1), .AW(2)) w_fifo (
    .clk(clk), .rst(rst),
    .in_data(w_in_data), .in_valid(w_in_valid), .in_ready(w_in_ready),
    .out_data(w_out_data), .out_valid(w_out_valid), .out_ready(m_axi_wready && w_credit_reg != 4'd0)
);

assign m_axi_awid = 1'b0;
assign m_axi_awaddr = aw_out_data[ADDR_W+8-1:8];
assign m_axi_awlen = aw_out_data[7:0];
assign m_axi_awsize = LG[2:0];
assign m_axi_awburst = 2'b01;                // INCR
assign m_axi_awcache = 4'b0011;
assign m_axi_awprot = 3'b010;
assign m_axi_awvalid = aw_out_valid;
assign m_axi_wdata = w_out_data[DATA_W+KEEP_W:KEEP_W+1];
assign m_axi_wstrb = w_out_data[KEEP_W:1];
assign m_axi_wlast = w_out_data[0];
assign m_axi_wvalid = w_go;

always @(posedge clk) begin
    w_credit_reg <= w_credit_reg + ((m_axi_awvalid && m_axi_awready) ? 4'd1 : 4'd0)
        - ((w_go && m_axi_wready && m_axi_wlast) ? 4'd1 : 4'd0);
    if (rst) begin
        w_credit_reg <= 4'd0;
    end
end

reg                  rf_in_valid;
reg  [RF_W-1:0]      rf_in_data;
wire                 rf_in_ready;
wire [RF_W-1:0]      rf_out_data;
wire                 rf_out_valid;
wire                 rf_out_ready;

ddp_rx_fifo #(.WIDTH(RF_W), .AW(REC_AW)) rec_fifo (
    .clk(clk), .rst(rst),
    .in_data(rf_in_data), .in_valid(rf_in_valid), .in_ready(rf_in_ready),
    .out_data(rf_out_data), .out_valid(rf_out_valid), .out_ready(rf_out_ready)
);

// --- piece state machine ----------------------------------------------------

reg [3:0]              state_reg = S_IDLE, state_next;

// The piece: its tuser, and the connection's context.
reg [CONN_W-1:0]       p_conn_reg, p_conn_next;
reg                    p_first_reg, p_first_next;
reg                    p_last_reg, p_last_next;
reg [15:0]             p_ulen_reg, p_ulen_next;

reg                    c_en_reg, c_en_next;
reg [31:0]             c_pd_reg, c_pd_next;
reg                    c_fail_reg, c_fail_next;
reg [Q_W-1:0]          c_q0_reg, c_q0_next, c_q1_reg, c_q1_next, c_q2_reg, c_q2_next;
reg                    c_place_reg, c_place_next;
reg [ADDR_W-1:0]       c_nxt_reg, c_nxt_next;
reg [15:0]             c_remain_reg, c_remain_next;
reg [RECC_W-1:0]       c_rec_reg, c_rec_next;

// Held beats: the first HB beats of a first piece, for the header.
reg [HB*DATA_W-1:0]    h_data_reg, h_data_next;
reg [HB*KEEP_W-1:0]    h_keep_reg, h_keep_next;
reg [HB-1:0]           h_last_reg, h_last_next;
reg [HBC_W-1:0]        h_cnt_reg = 0, h_cnt_next;

// Header fields (CHK1).
reg                    k_tagged_reg, k_tagged_next;
reg                    k_l_reg, k_l_next;
reg [3:0]              k_op_reg, k_op_next;
reg [31:0]             k_stag_reg, k_stag_next;
reg [63:0]             k_to_reg, k_to_next;
reg [31:0]             k_inv_reg, k_inv_next;
reg [31:0]             k_msn_reg, k_msn_next;
reg [31:0]             k_mo_reg, k_mo_next;
reg [1:0]              k_qn_reg, k_qn_next;
reg [15:0]             k_n_reg, k_n_next;             // payload octets of the ULPDU
reg [4:0]              k_hlen_reg, k_hlen_next;
reg                    k_cerr_reg, k_cerr_next;       // classification error
reg [15:0]             k_cerr_code_reg, k_cerr_code_next;  // {layer, etype, code}
reg [31:0]             k_d_reg, k_d_next;             // MSN - first
reg                    k_oor_reg, k_oor_next;         // STag index beyond the table
reg [Q_W-1:0]          k_q_reg, k_q_next;

// Check results (CHK2).
reg                    e_t_inv_reg, e_t_assoc_reg, e_t_acc_reg, e_t_wrap_reg, e_t_bounds_reg;
reg                    e_u_nobuf_reg, e_u_behind_reg, e_u_mo_reg, e_u_long_reg, e_u_lorder_reg;
reg                    e_i_bad_reg, e_rr_bad_reg;
reg [ADDR_W-1:0]       e_dt_reg, e_du_reg;
reg [31:0]             e_len_reg;
reg [ID_W-1:0]         e_id_reg;
reg [ST_W-1:0]         e_st_reg;
reg                    e_t_inv_next, e_t_assoc_next, e_t_acc_next, e_t_wrap_next, e_t_bounds_next;
reg                    e_u_nobuf_next, e_u_behind_next, e_u_mo_next, e_u_long_next, e_u_lorder_next;
reg                    e_i_bad_next, e_rr_bad_next;
reg [ADDR_W-1:0]       e_dt_next, e_du_next;
reg [31:0]             e_len_next;
reg [ID_W-1:0]         e_id_next;
reg [ST_W-1:0]         e_st_next;

// Data phase.
reg                    d_place_reg, d_place_next;
reg [ADDR_W-1:0]       d_dest_reg, d_dest_next;       // host address of the piece's first payload octet
reg [4:0]              d_s_reg, d_s_next;             // its octet in the piece (header length or 0)
reg [LG-1:0]           d_r_reg, d_r_next;             // rotation
reg [17:0]             d_gs_reg, d_gs_next, d_ge_reg, d_ge_next, d_gb_reg, d_gb_next;
reg [ADDR_W-1:0]       d_waddr_reg, d_waddr_next;
reg [17:0]             d_left_reg, d_left_next;       // beats to the end of the ULPDU's payload
reg [8:0]              d_bleft_reg = 0, d_bleft_next; // beats left in the open burst
reg [11:0]             d_k_reg, d_k_next;             // input beat index
reg [DATA_W-1:0]       d_prev_reg, d_prev_next;
reg [KEEP_W-1:0]       d_prevk_reg, d_prevk_next;
reg [16:0]             d_octs_reg, d_octs_next;       // octets of the piece
reg [223:0]            d_rr_reg, d_rr_next;

// Pending post.
reg [1:0]              o_qn_reg, o_qn_next;
reg [RG_W-1:0]         o_ent_reg, o_ent_next;

// Bursts whose B response is outstanding: the connection of each, in AW
// order (B responses come in that order: one AXI ID). aw_cnt counts the
// bursts queued, b_cnt the B responses taken; a delivery record carries
// aw_cnt at its push, and is delivered only once b_cnt has reached it.
wire                 bq_in_ready;
wire [CONN_W-1:0]    bq_out_data;
wire                 bq_out_valid;
wire                 b_go;
reg  [MK_W-1:0]      aw_cnt_reg = 0;
reg  [MK_W-1:0]      b_cnt_reg = 0;

ddp_rx_fifo #(.WIDTH(CONN_W), .AW(BQ_AW)) bq_fifo (
    .clk(clk), .rst(rst),
    .in_data(p_conn_reg), .in_valid(aw_in_valid), .in_ready(bq_in_ready),
    .out_data(bq_out_data), .out_valid(bq_out_valid), .out_ready(b_go)
);

always @(posedge clk) begin
    if (aw_in_valid && aw_in_ready) begin
        aw_cnt_reg <= aw_cnt_reg + 1'b1;
    end
    if (b_go) begin
        b_cnt_reg <= b_cnt_reg + 1'b1;
    end
    if (rst) begin
        aw_cnt_reg <= 0;
        b_cnt_reg <= 0;
    end
end

// Connections that took an error B response (SLVERR, DECERR) since their
// last (re)start: nothing more of them is placed, and the next delivery
// record of the connection reports a Local Catastrophic Error.
reg [NCONN-1:0]        herr_reg = {NCONN{1'b0}};

assign s_conn_ready = state_reg == S_IDLE;
assign s_stag_ready = state_reg == S_IDLE && !s_conn_valid;
assign s_post_ready = state_reg == S_IDLE && !s_conn_valid && !s_stag_valid;


// Current beat of the data phase: a held beat, or the input.
wire                   d_from_held = d_k_reg < {10'd0, h_cnt_reg};
reg  [DATA_W-1:0]      held_data;
reg  [KEEP_W-1:0]      held_keep;
reg                    held_last;

always @* begin : held_select
    integer b;
    held_data = h_data_reg[DATA_W-1:0];
    held_keep = h_keep_reg[KEEP_W-1:0];
    held_last = h_last_reg[0];
    for (b = 1; b < HB; b = b + 1) begin
        if ({30'd0, d_k_reg[1:0]} == b) begin
            held_data = h_data_reg[b*DATA_W +: DATA_W];
            held_keep = h_keep_reg[b*KEEP_W +: KEEP_W];
            held_last = h_last_reg[b];
        end
    end
end

wire [DATA_W-1:0]      d_cur_data = d_from_held ? held_data : s_axis_tdata;
wire [KEEP_W-1:0]      d_cur_keep = d_from_held ? held_keep : s_axis_tkeep;
wire                   d_cur_last = d_from_held ? held_last : s_axis_tlast;
wire                   d_cur_valid = d_from_held || s_axis_tvalid;
wire                   out_ok = aw_in_ready && w_in_ready && bq_in_ready;

assign s_axis_tready = (state_reg == S_HDR) || (state_reg == S_DATA && !d_from_held && out_ok);

// Header octets, from the held beats.
wire [18*8-1:0]        hdr = h_data_reg[18*8-1:0];

// Output beat: lanes at or above the rotation from the current beat,
// below it from the previous one, each rotated up by R lanes.
reg [DATA_W-1:0]       ob_data;
reg [KEEP_W-1:0]       ob_keep, ob_strb;
reg [2*DATA_W-1:0]     rot_d_cur, rot_d_prev;
reg [2*KEEP_W-1:0]     rot_k_cur, rot_k_prev;
reg [KEEP_W-1:0]       hi_lanes;
reg                    ob_flush;

always @* begin
    ob_flush = state_reg == S_FLUSH;
    rot_d_cur = {d_cur_data, d_cur_data} << (8 * d_r_reg);
    rot_k_cur = {d_cur_keep, d_cur_keep} << d_r_reg;
    rot_d_prev = {d_prev_reg, d_prev_reg} << (8 * d_r_reg);
    rot_k_prev = {d_prevk_reg, d_prevk_reg} << d_r_reg;
    hi_lanes = lane_window({1'b0, d_r_reg}, KEEP_WI[LG:0]);
    ob_data = (rot_d_cur[2*DATA_W-1:DATA_W] & {KEEP_W{8'hff}} & expand(hi_lanes))
            | (rot_d_prev[2*DATA_W-1:DATA_W] & expand(~hi_lanes));
    ob_keep = ((ob_flush ? {KEEP_W{1'b0}} : rot_k_cur[2*KEEP_W-1:KEEP_W]) & hi_lanes)
            | (rot_k_prev[2*KEEP_W-1:KEEP_W] & ~hi_lanes);
    ob_strb = ob_keep & lane_window(clamp_lanes(d_gs_reg, d_gb_reg), clamp_lanes(d_ge_reg, d_gb_reg))
            & {KEEP_W{d_place_reg}};
end

function [DATA_W-1:0] expand(input [KEEP_W-1:0] m);
    integer b;
    begin
        for (b = 0; b < KEEP_W; b = b + 1) begin
            expand[8*b +: 8] = {8{m[b]}};
        end
    end
endfunction

// Burst of a new write beat: up to the end of the BURST-aligned block, and
// to the end of the ULPDU's payload.
reg [8:0]              blk_left;
reg [8:0]              new_blen;

always @* begin
    blk_left = BURST[8:0] - {{(9-BW){1'b0}}, d_waddr_reg[LG +: BW]};
    new_blen = (d_left_reg < {9'd0, blk_left}) ? d_left_reg[8:0] : blk_left;
end

// Classification (CHK1), from the held header and the context.
reg                    h_t, h_l;
reg [1:0]              h_dv, h_rv;
reg [3:0]              h_op;
reg [31:0]             h_stag, h_inv, h_qn, h_msn, h_mo;
reg [63:0]             h_to;
reg [4:0]              h_hlen;
reg                    h_short, h_optag;
reg [1:0]              h_opqn;
reg                    h_cerr;
reg [15:0]             h_cerr_code;
reg [Q_W-1:0]          h_q;
reg [31:0]             h_d;
reg [31:0]             h_idx_stag;

always @* begin
    h_t = hdr[7];
    h_l = hdr[6];
    h_dv = hdr[1:0];
    h_rv = hdr[15:14];
    h_op = hdr[11:8];
    h_stag = be32(hdr, 2);
    h_to = {be32(hdr, 6), be32(hdr, 10)};
    h_inv = be32(hdr, 2);
    h_qn = be32(hdr, 6);
    h_msn = be32(hdr, 10);
    h_mo = be32(hdr, 14);
    h_hlen = h_t ? 5'd14 : 5'd18;
    h_short = p_ulen_reg < {11'd0, h_hlen};
    h_optag = h_op == 4'd0 || h_op == 4'd2;
    h_opqn = h_op == 4'd1 ? 2'd1 : h_op == 4'd7 ? 2'd2 : 2'd0;
    // rdmap.ClassifyHeader's order, after ddp.ParseHeader's length check.
    h_cerr = 1'b1;
    if (h_short) begin
        h_cerr_code = 16'h0207;          // RDMAP Remote Operation: catastrophic, stream
    end else if (h_dv != 2'd1) begin
        h_cerr_code = h_t ? 16'h1104 : 16'h1206;   // DDP: invalid DDP version
    end else if (h_rv != 2'd1) begin
        h_cerr_code = 16'h0205;          // RDMAP: invalid RDMAP version
    end else if (h_op[3] || h_optag != h_t) begin
        h_cerr_code = 16'h0206;          // RDMAP: unexpected opcode
    end else if (!h_t && h_qn > 32'd2) begin
        h_cerr_code = 16'h1201;          // DDP: invalid QN
    end else if (!h_t && h_qn[1:0] != h_opqn) begin
        h_cerr_code = 16'h0206;
    end else begin
        h_cerr = 1'b0;
        h_cerr_code = 16'h0000;
    end
    case (h_qn[1:0])
        2'd1: h_q = c_q1_reg;
        2'd2: h_q = c_q2_reg;
        default: h_q = c_q0_reg;
    endcase
    h_d = h_msn - h_q[Q_W-1 -: 32];
    h_idx_stag = h_t ? h_stag : h_inv;
end

// Checks (CHK2), on the STag entry and posted buffer just read.
reg                    st_valid, st_bound;
reg [7:0]              st_key;
reg [31:0]             st_pd, st_len;
reg [CONN_W-1:0]       st_conn;
reg [1:0]              st_acc;
reg [63:0]             st_base;
reg [ADDR_W-1:0]       st_addr;
reg [ADDR_W-1:0]       rg_addr;
reg [31:0]             rg_len;
reg [ID_W-1:0]         rg_id;
reg [64:0]             c2_toend, c2_off;
reg [32:0]             c2_offn, c2_mon;
reg                    c2_stag_bad, c2_assoc_bad;
reg [RQ_AW:0]          c2_cnt;

always @* begin
    {st_valid, st_key, st_pd, st_bound, st_conn, st_acc, st_base, st_len, st_addr} = st_rd_data;
    {rg_addr, rg_len, rg_id} = rg_rd_data;
    c2_toend = {1'b0, k_to_reg} + {49'd0, k_n_reg};
    c2_off = {1'b0, k_to_reg} - {1'b0, st_base};
    c2_offn = {1'b0, c2_off[31:0]} + {17'd0, k_n_reg};
    c2_mon = {1'b0, k_mo_reg} + {17'd0, k_n_reg};
    c2_stag_bad = !st_valid || st_key != k_idx_key(k_tagged_reg, k_stag_reg[7:0], k_inv_reg[7:0]) || k_oor_reg;
    c2_assoc_bad = st_pd != c_pd_reg || (st_bound && st_conn != p_conn_reg);
    c2_cnt = k_q_reg[RQ_AW:0];
end

function [7:0] k_idx_key(input t, input [7:0] stag, input [7:0] inv);
    k_idx_key = t ? stag : inv;
endfunction

// Queue state after popping the head (a delivered untagged message).
function [Q_W-1:0] q_pop(input [Q_W-1:0] q);
    reg [31:0] first;
    reg [RQ_AW-1:0] head;
    reg [RQ_AW:0] cnt;
    begin
        {first, head, cnt} = q;
        q_pop = {first + 32'd1, head + 1'b1, cnt - 1'b1};
    end
endfunction

localparam [Q_W-1:0] Q_INIT = {32'd1, {RQ_AW{1'b0}}, {(RQ_AW+1){1'b0}}};

// Delivery record fields.
reg [1:0]              r_kind;
reg [15:0]             r_err;
reg                    r_place;
reg                    r_pop;
reg                    r_inval;
reg [ADDR_W-1:0]       r_dest;
reg [16:0]             pay_piece;     // payload octets of this piece
reg [Q_W-1:0]          q_cur;
reg [31:0]             q_first;
reg [RQ_AW-1:0]        q_head;
reg [RQ_AW:0]          q_cnt;
integer                hb;
wire [7:0]             s_ext = {3'd0, d_s_reg};

always @* begin
    state_next = state_reg;
    p_conn_next = p_conn_reg;
    p_first_next = p_first_reg;
    p_last_next = p_last_reg;
    p_ulen_next = p_ulen_reg;
    c_en_next = c_en_reg;
    c_pd_next = c_pd_reg;
    c_fail_next = c_fail_reg;
    c_q0_next = c_q0_reg;
    c_q1_next = c_q1_reg;
    c_q2_next = c_q2_reg;
    c_place_next = c_place_reg;
    c_nxt_next = c_nxt_reg;
    c_remain_next = c_remain_reg;
    c_rec_next = c_rec_reg;
    h_data_next = h_data_reg;
    h_keep_next = h_keep_reg;
    h_last_next = h_last_reg;
    h_cnt_next = h_cnt_reg;
    k_tagged_next = k_tagged_reg;
    k_l_next = k_l_reg;
    k_op_next = k_op_reg;
    k_stag_next = k_stag_reg;
    k_to_next = k_to_reg;
    k_inv_next = k_inv_reg;
    k_msn_next = k_msn_reg;
    k_mo_next = k_mo_reg;
    k_qn_next = k_qn_reg;
    k_n_next = k_n_reg;
    k_hlen_next = k_hlen_reg;
    k_cerr_next = k_cerr_reg;
    k_cerr_code_next = k_cerr_code_reg;
    k_d_next = k_d_reg;
    k_oor_next = k_oor_reg;
    k_q_next = k_q_reg;
    e_t_inv_next = e_t_inv_reg;
    e_t_assoc_next = e_t_assoc_reg;
    e_t_acc_next = e_t_acc_reg;
    e_t_wrap_next = e_t_wrap_reg;
    e_t_bounds_next = e_t_bounds_reg;
    e_u_nobuf_next = e_u_nobuf_reg;
    e_u_behind_next = e_u_behind_reg;
    e_u_mo_next = e_u_mo_reg;
    e_u_long_next = e_u_long_reg;
    e_u_lorder_next = e_u_lorder_reg;
    e_i_bad_next = e_i_bad_reg;
    e_rr_bad_next = e_rr_bad_reg;
    e_dt_next = e_dt_reg;
    e_du_next = e_du_reg;
    e_len_next = e_len_reg;
    e_id_next = e_id_reg;
    e_st_next = e_st_reg;
    d_place_next = d_place_reg;
    d_dest_next = d_dest_reg;
    d_s_next = d_s_reg;
    d_r_next = d_r_reg;
    d_gs_next = d_gs_reg;
    d_ge_next = d_ge_reg;
    d_gb_next = d_gb_reg;
    d_waddr_next = d_waddr_reg;
    d_left_next = d_left_reg;
    d_bleft_next = d_bleft_reg;
    d_k_next = d_k_reg;
    d_prev_next = d_prev_reg;
    d_prevk_next = d_prevk_reg;
    d_octs_next = d_octs_reg;
    d_rr_next = d_rr_reg;
    o_qn_next = o_qn_reg;
    o_ent_next = o_ent_reg;

    cx_wr_en = 1'b0;
    cx_wr_addr = p_conn_reg;
    cx_wr_data = {c_en_reg, c_pd_reg, c_fail_reg, c_q2_reg, c_q1_reg, c_q0_reg, c_place_reg,
                  c_nxt_reg, c_remain_reg, c_rec_reg};
    cx_rd_en = 1'b0;
    cx_rd_addr = s_axis_tuser[CONN_W+1:2];
    st_wr_en = 1'b0;
    st_wr_addr = s_stag_index;
    st_wr_data = {s_stag_entry_valid, s_stag_key, s_stag_pd, s_stag_bound, s_stag_conn,
                  s_stag_access, s_stag_base, s_stag_len, s_stag_addr};
    st_rd_en = 1'b0;
    st_rd_addr = h_idx_stag[8 +: STAG_AW];
    rg_wr_en = 1'b0;
    rg_wr_addr = {p_conn_reg, o_qn_reg, {RQ_AW{1'b0}}};
    rg_wr_data = o_ent_reg;
    rg_rd_en = 1'b0;
    rg_rd_addr = {p_conn_reg, h_qn[1:0], h_q[Q_W-33 -: RQ_AW] + h_d[RQ_AW-1:0]};
    aw_in_valid = 1'b0;
    aw_in_data = {d_waddr_reg, 8'd0};
    w_in_valid = 1'b0;
    w_in_data = {ob_data, ob_strb, 1'b0};
    rf_in_valid = 1'b0;
    rf_in_data = {c_en_reg, aw_cnt_reg, p_conn_reg, c_rec_reg, d_rr_reg};

    r_kind = K_NONE;
    r_err = 16'd0;
    r_place = 1'b0;
    r_pop = 1'b0;
    r_inval = 1'b0;
    r_dest = e_du_reg;
    pay_piece = 17'd0;
    q_cur = k_q_reg;
    {q_first, q_head, q_cnt} = k_q_reg;

    case (state_reg)
    S_IDLE: begin
        if (s_conn_valid) begin
            // (Re)start a connection (RFC 5041 4.3: every queue at MSN 1).
            cx_wr_en = 1'b1;
            cx_wr_addr = s_conn_conn;
            cx_wr_data = {s_conn_enable, s_conn_pd, 1'b0, Q_INIT, Q_INIT, Q_INIT, 1'b0,
                          {ADDR_W{1'b0}}, 16'd0, {RECC_W{1'b0}}};
        end else if (s_stag_valid) begin
            st_wr_en = 1'b1;
        end else if (s_post_valid) begin
            p_conn_next = s_post_conn;
            o_qn_next = s_post_qn;
            o_ent_next = {s_post_addr, s_post_len, s_post_id};
            cx_rd_en = 1'b1;
            cx_rd_addr = s_post_conn;
            state_next = S_POST;
        end else if (s_axis_tvalid) begin
            {p_ulen_next, p_conn_next, p_first_next, p_last_next} = s_axis_tuser;
            cx_rd_en = 1'b1;
            h_cnt_next = 0;
            state_next = S_CTX;
        end
    end
    S_POST: begin
        {c_en_next, c_pd_next, c_fail_next, c_q2_next, c_q1_next, c_q0_next, c_place_next,
         c_nxt_next, c_remain_next, c_rec_next} = cx_rd_data;
        case (o_qn_reg)
            2'd1: q_cur = c_q1_next;
            2'd2: q_cur = c_q2_next;
            default: q_cur = c_q0_next;
        endcase
        {q_first, q_head, q_cnt} = q_cur;
        if (c_en_next && o_qn_reg != 2'd3 && q_cnt != (1 << RQ_AW)) begin
            // The buffer takes the MSN after the last posted one (4.3).
            rg_wr_en = 1'b1;
            rg_wr_addr = {p_conn_reg, o_qn_reg, q_head + q_cnt[RQ_AW-1:0]};
            q_cur = {q_first, q_head, q_cnt + 1'b1};
            case (o_qn_reg)
                2'd1: c_q1_next = q_cur;
                2'd2: c_q2_next = q_cur;
                default: c_q0_next = q_cur;
            endcase
            cx_wr_en = 1'b1;
            cx_wr_data = {c_en_next, c_pd_next, c_fail_next, c_q2_next, c_q1_next, c_q0_next,
                          c_place_next, c_nxt_next, c_remain_next, c_rec_next};
        end
        state_next = S_IDLE;
    end
    S_CTX: begin
        {c_en_next, c_pd_next, c_fail_next, c_q2_next, c_q1_next, c_q0_next, c_place_next,
         c_nxt_next, c_remain_next, c_rec_next} = cx_rd_data;
        d_rr_next = p_first_reg ? 224'd0 : rb_rd_data;
        if (p_first_reg) begin
            state_next = S_HDR;
        end else begin
            // A later piece of a ULPDU: carry on where the last one ended.
            d_place_next = c_place_next && c_en_next && !herr_reg[p_conn_reg];
            d_dest_next = c_nxt_next;
            d_s_next = 5'd0;
            state_next = S_SET;
        end
    end
    S_HDR: begin
        if (s_axis_tvalid) begin
            for (hb = 0; hb < HB; hb = hb + 1) begin
                if ({30'd0, h_cnt_reg} == hb) begin
                    h_data_next[hb*DATA_W +: DATA_W] = s_axis_tdata;
                    h_keep_next[hb*KEEP_W +: KEEP_W] = s_axis_tkeep;
                    h_last_next[hb] = s_axis_tlast;
                end
            end
            h_cnt_next = h_cnt_reg + 1'b1;
            if (s_axis_tlast || {30'd0, h_cnt_next} == HB) begin
                state_next = S_CHK1;
            end
        end
    end
    S_CHK1: begin
        k_tagged_next = h_t;
        k_l_next = h_l;
        k_op_next = h_op;
        k_stag_next = h_stag;
        k_to_next = h_to;
        k_inv_next = h_inv;
        k_msn_next = h_msn;
        k_mo_next = h_mo;
        k_qn_next = h_qn[1:0];
        k_n_next = p_ulen_reg - {11'd0, h_hlen};
        k_hlen_next = h_hlen;
        k_cerr_next = h_cerr;
        k_cerr_code_next = h_cerr_code;
        k_d_next = h_d;
        k_oor_next = (h_idx_stag >> (8 + STAG_AW)) != 32'd0;
        k_q_next = h_q;
        st_rd_en = 1'b1;
        rg_rd_en = 1'b1;
        state_next = S_CHK2;
    end
    S_CHK2: begin
        // ddp.STagTable.checkLocked (RFC 5041 7.1, 8.2) for the whole
        // segment, and ddp.Sink.checkUntagged.
        e_t_inv_next = c2_stag_bad;
        e_t_assoc_next = c2_assoc_bad;
        e_t_acc_next = !st_acc[0];
        e_t_wrap_next = c2_toend[64];
        e_t_bounds_next = c2_off[64] || c2_off[63:32] != 32'd0 || c2_offn > {1'b0, st_len};
        e_dt_next = st_addr + c2_off[ADDR_W-1:0];
        e_u_nobuf_next = (k_d_reg >> (RQ_AW + 1)) != 32'd0 || k_d_reg[RQ_AW:0] >= c2_cnt;
        e_u_behind_next = k_d_reg[31];
        e_u_mo_next = k_mo_reg > rg_len;
        e_u_long_next = c2_mon > {1'b0, rg_len};
        e_u_lorder_next = k_l_reg && k_d_reg != 32'd0;
        e_du_next = rg_addr + {{(ADDR_W-32){1'b0}}, k_mo_reg};
        e_len_next = c2_mon[31:0];
        e_id_next = rg_id;
        // rdmap.Invalidate: ddp.STagTable.InvalidateRemote's checks.
        e_i_bad_next = c2_stag_bad || c2_assoc_bad;
        e_rr_bad_next = c2_mon != 33'd28;
        e_st_next = st_rd_data;
        state_next = S_CHK3;
    end
    S_CHK3: begin
        if (c_fail_reg || !c_en_reg || herr_reg[p_conn_reg]) begin
            r_kind = K_NONE;            // the stream has failed: dropped
        end else if (k_cerr_reg) begin
            r_kind = K_ERR;
            r_err = k_cerr_code_reg;
        end else if (k_tagged_reg) begin
            r_dest = e_dt_reg;
            if (k_n_reg != 16'd0 && e_t_inv_reg) begin
                r_kind = K_ERR;
                r_err = 16'h1100;       // DDP tagged: invalid STag
            end else if (k_n_reg != 16'd0 && e_t_assoc_reg) begin
                r_kind = K_ERR;
                r_err = 16'h1102;       // DDP tagged: STag not associated with stream
            end else if (k_n_reg != 16'd0 && e_t_acc_reg) begin
                r_kind = K_ERR;
                r_err = 16'h0102;       // RDMAP remote protection: access rights
            end else if (k_n_reg != 16'd0 && e_t_wrap_reg) begin
                r_kind = K_ERR;
                r_err = 16'h1103;       // DDP tagged: TO wrap
            end else if (k_n_reg != 16'd0 && e_t_bounds_reg) begin
                r_kind = K_ERR;
                r_err = 16'h1101;       // DDP tagged: base or bounds
            end else begin
                r_place = k_n_reg != 16'd0;
                r_kind = k_l_reg ? K_CPL : K_NONE;
            end
        end else begin
            if (e_u_nobuf_reg) begin
                r_kind = K_ERR;
                r_err = e_u_behind_reg ? 16'h1203 : 16'h1202;
            end else if (e_u_mo_reg) begin
                r_kind = K_ERR;
                r_err = 16'h1204;       // DDP untagged: invalid MO
            end else if (e_u_long_reg) begin
                r_kind = K_ERR;
                r_err = 16'h1205;       // DDP untagged: message too long
            end else if (e_u_lorder_reg) begin
                r_kind = K_ERR;
                r_err = 16'h1203;       // DDP untagged: MSN range
            end else begin
                r_place = k_n_reg != 16'd0;
                r_pop = k_l_reg;
                if (!k_l_reg) begin
                    r_kind = K_NONE;
                end else if (k_op_reg == 4'd1 && e_rr_bad_reg) begin
                    r_kind = K_ERR;
                    r_err = 16'h0207;   // rdmap.ParseReadRequest: not 28 octets
                end else if (k_op_reg == 4'd7) begin
                    r_kind = K_TERM;
                end else if ((k_op_reg == 4'd4 || k_op_reg == 4'd6) && e_i_bad_reg) begin
                    r_kind = K_ERR;
                    r_err = 16'h0109;   // RDMAP remote protection: cannot invalidate
                end else begin
                    r_kind = K_CPL;
                    r_inval = k_op_reg == 4'd4 || k_op_reg == 4'd6;
                end
            end
        end
        if (r_kind == K_ERR || r_kind == K_TERM) begin
            c_fail_next = 1'b1;
        end
        if (r_pop) begin
            case (k_qn_reg)
                2'd1: c_q1_next = q_pop(c_q1_reg);
                2'd2: c_q2_next = q_pop(c_q2_reg);
                default: c_q0_next = q_pop(c_q0_reg);
            endcase
        end
        if (r_inval) begin
            st_wr_en = 1'b1;
            st_wr_addr = k_inv_reg[8 +: STAG_AW];
            st_wr_data = {1'b0, e_st_reg[ST_W-2:0]};
        end
        if (k_tagged_reg) begin
            c_rec_next = {r_kind, k_op_reg, 1'b1, 2'd0, 32'd0, 32'd0, {ID_W{1'b0}}, k_stag_reg,
                          32'd0, r_err};
        end else begin
            c_rec_next = {r_kind, k_op_reg, 1'b0, k_qn_reg, k_msn_reg, e_len_reg, e_id_reg, 32'd0,
                          r_inval ? k_inv_reg : 32'd0, r_err};
        end
        c_place_next = r_place;
        c_remain_next = k_n_reg;
        d_place_next = r_place;
        d_dest_next = r_dest;
        d_s_next = k_hlen_reg;
        state_next = S_SET;
    end
    S_SET: begin
        // Rotation R = (dest - S) mod N; output beat m holds the octets
        // whose g = piece octet + R is in m*N .. m*N + N-1.
        d_r_next = d_dest_reg[LG-1:0] - s_ext[LG-1:0];
        d_gs_next = {13'd0, d_s_reg} + {{(18-LG){1'b0}}, d_r_next};
        d_ge_next = d_gs_next + {2'd0, c_remain_reg};
        d_gb_next = 18'd0;
        d_waddr_next = (d_dest_reg - {{(ADDR_W-5){1'b0}}, d_s_reg}) & {{(ADDR_W-LG){1'b1}}, {LG{1'b0}}};
        d_left_next = ({{(18-LG){1'b0}}, d_dest_reg[LG-1:0]} + {2'd0, c_remain_reg} + N18 - 18'd1) >> LG;
        d_bleft_next = 9'd0;
        d_k_next = 12'd0;
        d_prev_next = {DATA_W{1'b0}};
        d_prevk_next = {KEEP_W{1'b0}};
        d_octs_next = 17'd0;
        state_next = S_DATA;
    end
    S_DATA: begin
        if (d_cur_valid && out_ok) begin
            if (ob_strb != {KEEP_W{1'b0}}) begin
                w_in_valid = 1'b1;
                if (d_bleft_reg == 9'd0) begin
                    aw_in_valid = 1'b1;
                    aw_in_data = {d_waddr_reg, new_blen[7:0] - 8'd1};
                    w_in_data[0] = new_blen == 9'd1;
                    d_bleft_next = new_blen - 9'd1;
                end else begin
                    w_in_data[0] = d_bleft_reg == 9'd1;
                    d_bleft_next = d_bleft_reg - 9'd1;
                end
                d_left_next = d_left_reg - 18'd1;
            end
            // The Read Request's body, octets 18..45 of the ULPDU.
            if (p_first_reg) begin
                d_rr_next = rr_capture(d_rr_reg, d_cur_data, d_k_reg);
            end
            d_prev_next = d_cur_data;
            d_prevk_next = d_cur_keep;
            d_k_next = d_k_reg + 12'd1;
            d_gb_next = d_gb_reg + N18;
            d_waddr_next = d_waddr_reg + N_A;
            if (d_cur_last) begin
                d_octs_next = ({5'd0, d_k_reg} << LG) + {{(16-LG){1'b0}}, keep_count(d_cur_keep)};
                state_next = S_FLUSH;
            end
        end
    end
    S_FLUSH: begin
        if (out_ok) begin
            if (ob_strb != {KEEP_W{1'b0}}) begin
                w_in_valid = 1'b1;
                if (d_bleft_reg == 9'd0) begin
                    aw_in_valid = 1'b1;
                    aw_in_data = {d_waddr_reg, new_blen[7:0] - 8'd1};
                    w_in_data[0] = new_blen == 9'd1;
                    d_bleft_next = new_blen - 9'd1;
                end else begin
                    w_in_data[0] = d_bleft_reg == 9'd1;
                    d_bleft_next = d_bleft_reg - 9'd1;
                end
                d_left_next = d_left_reg - 18'd1;
            end
            d_waddr_next = d_waddr_reg + N_A;
            state_next = (d_bleft_next != 9'd0) ? S_PAD : S_END;
        end
    end
    S_PAD: begin
        // The piece ended inside a burst: the rest of it, no strobes.
        if (out_ok) begin
            w_in_valid = 1'b1;
            w_in_data = {{DATA_W{1'b0}}, {KEEP_W{1'b0}}, d_bleft_reg == 9'd1};
            d_bleft_next = d_bleft_reg - 9'd1;
            if (d_bleft_reg == 9'd1) begin
                state_next = S_END;
            end
        end
    end
    S_END: begin
        // Payload octets of this piece: those past the header, up to the
        // end of the ULPDU's payload.
        if (d_octs_reg > {12'd0, d_s_reg}) begin
            pay_piece = d_octs_reg - {12'd0, d_s_reg};
        end
        if (pay_piece > {1'b0, c_remain_reg}) begin
            pay_piece = {1'b0, c_remain_reg};
        end
        if (!p_last_reg || rf_in_ready) begin
            cx_wr_en = 1'b1;
            cx_wr_data = {c_en_reg, c_pd_reg, c_fail_reg, c_q2_reg, c_q1_reg, c_q0_reg,
                          c_place_reg && !p_last_reg,
                          c_nxt_reg, c_remain_reg - pay_piece[15:0], c_rec_reg};
            if (d_place_reg) begin
                cx_wr_data[16 + RECC_W +: ADDR_W] = d_dest_reg + {{(ADDR_W-17){1'b0}}, pay_piece};
            end
            rf_in_valid = p_last_reg;
            rf_in_data = {c_en_reg, aw_cnt_reg, p_conn_reg, cx_wr_data[RECC_W-1:0], d_rr_reg};
            state_next = S_IDLE;
        end
    end
    default: begin
        state_next = S_IDLE;
    end
    endcase
    // Whether the piece ends its ULPDU is read where it is valid: on the
    // piece's tlast beat (hw/README.md; mpa_rx drives it there only).
    if (s_axis_tvalid && s_axis_tready && s_axis_tlast) begin
        p_last_next = s_axis_tuser[0];
    end
end

// Octets 18..45 of a first piece from its input beat k.
function [223:0] rr_capture(input [223:0] rr, input [DATA_W-1:0] beat, input [11:0] k);
    integer j;
    begin
        rr_capture = rr;
        for (j = 0; j < 28; j = j + 1) begin
            if ({20'd0, k} == (18 + j) / KEEP_W) begin
                rr_capture[8*j +: 8] = beat[8*((18 + j) % KEEP_W) +: 8];
            end
        end
    end
endfunction

always @(posedge clk) begin
    state_reg <= state_next;
    p_conn_reg <= p_conn_next;
    p_first_reg <= p_first_next;
    p_last_reg <= p_last_next;
    p_ulen_reg <= p_ulen_next;
    c_en_reg <= c_en_next;
    c_pd_reg <= c_pd_next;
    c_fail_reg <= c_fail_next;
    c_q0_reg <= c_q0_next;
    c_q1_reg <= c_q1_next;
    c_q2_reg <= c_q2_next;
    c_place_reg <= c_place_next;
    c_nxt_reg <= c_nxt_next;
    c_remain_reg <= c_remain_next;
    c_rec_reg <= c_rec_next;
    h_data_reg <= h_data_next;
    h_keep_reg <= h_keep_next;
    h_last_reg <= h_last_next;
    h_cnt_reg <= h_cnt_next;
    k_tagged_reg <= k_tagged_next;
    k_l_reg <= k_l_next;
    k_op_reg <= k_op_next;
    k_stag_reg <= k_stag_next;
    k_to_reg <= k_to_next;
    k_inv_reg <= k_inv_next;
    k_msn_reg <= k_msn_next;
    k_mo_reg <= k_mo_next;
    k_qn_reg <= k_qn_next;
    k_n_reg <= k_n_next;
    k_hlen_reg <= k_hlen_next;
    k_cerr_reg <= k_cerr_next;
    k_cerr_code_reg <= k_cerr_code_next;
    k_d_reg <= k_d_next;
    k_oor_reg <= k_oor_next;
    k_q_reg <= k_q_next;
    e_t_inv_reg <= e_t_inv_next;
    e_t_assoc_reg <= e_t_assoc_next;
    e_t_acc_reg <= e_t_acc_next;
    e_t_wrap_reg <= e_t_wrap_next;
    e_t_bounds_reg <= e_t_bounds_next;
    e_u_nobuf_reg <= e_u_nobuf_next;
    e_u_behind_reg <= e_u_behind_next;
    e_u_mo_reg <= e_u_mo_next;
    e_u_long_reg <= e_u_long_next;
    e_u_lorder_reg <= e_u_lorder_next;
    e_i_bad_reg <= e_i_bad_next;
    e_rr_bad_reg <= e_rr_bad_next;
    e_dt_reg <= e_dt_next;
    e_du_reg <= e_du_next;
    e_len_reg <= e_len_next;
    e_id_reg <= e_id_next;
    e_st_reg <= e_st_next;
    d_place_reg <= d_place_next;
    d_dest_reg <= d_dest_next;
    d_s_reg <= d_s_next;
    d_r_reg <= d_r_next;
    d_gs_reg <= d_gs_next;
    d_ge_reg <= d_ge_next;
    d_gb_reg <= d_gb_next;
    d_waddr_reg <= d_waddr_next;
    d_left_reg <= d_left_next;
    d_bleft_reg <= d_bleft_next;
    d_k_reg <= d_k_next;
    d_prev_reg <= d_prev_next;
    d_prevk_reg <= d_prevk_next;
    d_octs_reg <= d_octs_next;
    d_rr_reg <= d_rr_next;
    o_qn_reg <= o_qn_next;
    o_ent_reg <= o_ent_next;
    if (rst) begin
        state_reg <= S_IDLE;
        h_cnt_reg <= 0;
        d_bleft_reg <= 9'd0;
    end
end

// --- delivery: records and verdicts, in the order of last pieces ------------

reg [NCONN-1:0]        dead_reg = {NCONN{1'b0}};
reg                    cpl_valid_reg = 1'b0;
reg                    err_valid_reg = 1'b0;
reg [CONN_W-1:0]       ev_conn_reg;
reg [RECC_W-1:0]       ev_rec_reg;
reg [223:0]            ev_rr_reg;
reg [15:0]             ev_err_reg;

wire                   rf_en = rf_out_data[RF_W-1];
wire [MK_W-1:0]        rf_mark = rf_out_data[RF_W-2 -: MK_W];
wire [CONN_W-1:0]      rf_conn = rf_out_data[RF_W-MK_W-2 -: CONN_W];
wire [RECC_W-1:0]      rf_rec = rf_out_data[224 +: RECC_W];
wire [1:0]             rf_kind = rf_rec[RECC_W-1 -: 2];
wire                   ev_free = (!cpl_valid_reg || m_cpl_ready) && (!err_valid_reg || m_err_ready);
// A record waits for the B responses of every burst queued before it (its
// own included); B responses past the oldest record's mark wait for its
// delivery, so an error response is charged to the right record.
wire                   dv_bdone = b_cnt_reg == rf_mark;
wire                   dv_go = rf_out_valid && s_verdict_tvalid && ev_free && dv_bdone;

assign b_go = m_axi_bvalid && bq_out_valid && !(rf_out_valid && dv_bdone);
assign m_axi_bready = bq_out_valid && !(rf_out_valid && dv_bdone);

assign rf_out_ready = dv_go;
assign s_verdict_tready = dv_go;

always @(posedge clk) begin
    if (cpl_valid_reg && m_cpl_ready) begin
        cpl_valid_reg <= 1'b0;
    end
    if (err_valid_reg && m_err_ready) begin
        err_valid_reg <= 1'b0;
    end
    // A ULPDU of a connection that is not enabled reports nothing here
    // (m_drop reported its pieces), whatever its verdict.
    if (dv_go && !dead_reg[rf_conn] && rf_en) begin
        ev_conn_reg <= rf_conn;
        ev_rec_reg <= rf_rec;
        ev_rr_reg <= rf_out_data[223:0];
        if (s_verdict_tdata != 3'd0) begin
            // RFC 5044 8: an MPA error is fatal to the stream; nothing of
            // this ULPDU or a later one is delivered.
            err_valid_reg <= 1'b1;
            ev_err_reg <= {4'd2, 4'd0, 5'd0, s_verdict_tdata};
            dead_reg[rf_conn] <= 1'b1;
        end else if (herr_reg[rf_conn]) begin
            // A write of the stream got an error response: RDMAP Local
            // Catastrophic Error (RFC 5040 7), in place of what the ULPDU
            // would have reported.
            err_valid_reg <= 1'b1;
            ev_err_reg <= 16'h0000;
            dead_reg[rf_conn] <= 1'b1;
        end else if (rf_kind == K_ERR) begin
            err_valid_reg <= 1'b1;
            ev_err_reg <= rf_rec[15:0];
            dead_reg[rf_conn] <= 1'b1;
        end else if (rf_kind == K_CPL || rf_kind == K_TERM) begin
            cpl_valid_reg <= 1'b1;
            if (rf_kind == K_TERM) begin
                dead_reg[rf_conn] <= 1'b1;
            end
        end
    end
    if (b_go && m_axi_bresp[1]) begin
        herr_reg[bq_out_data] <= 1'b1;
    end
    if (state_reg == S_IDLE && s_conn_valid) begin
        dead_reg[s_conn_conn] <= 1'b0;
        herr_reg[s_conn_conn] <= 1'b0;
    end
    if (rst) begin
        cpl_valid_reg <= 1'b0;
        err_valid_reg <= 1'b0;
        dead_reg <= {NCONN{1'b0}};
        herr_reg <= {NCONN{1'b0}};
    end
end

// --- status pulses ----------------------------------------------------------

reg                    drop_valid_reg = 1'b0;
reg [CONN_W-1:0]       drop_conn_reg = 0;
reg                    drop_first_reg = 1'b0;
reg [31:0]             drop_count_reg = 32'd0;
reg                    perr_valid_reg = 1'b0;
reg [CONN_W-1:0]       perr_conn_reg = 0;
reg [1:0]              perr_qn_reg = 2'd0;
reg [ID_W-1:0]         perr_id_reg = 0;
reg [1:0]              perr_reason_reg = 2'd0;
reg                    berr_valid_reg = 1'b0;
reg [CONN_W-1:0]       berr_conn_reg = 0;
reg [1:0]              berr_resp_reg = 2'd0;
wire                   post_full = q_cnt == {1'b1, {RQ_AW{1'b0}}};

always @(posedge clk) begin
    // A piece of a connection that is not enabled (S_CTX has its context).
    drop_valid_reg <= state_reg == S_CTX && !c_en_next;
    drop_conn_reg <= p_conn_reg;
    drop_first_reg <= p_first_reg;
    if (state_reg == S_CTX && !c_en_next) begin
        drop_count_reg <= drop_count_reg + 32'd1;
    end
    // A post that S_POST does not take: a connection not enabled, QN 3, a
    // full ring.
    perr_valid_reg <= state_reg == S_POST && (!c_en_next || o_qn_reg == 2'd3 || post_full);
    perr_conn_reg <= p_conn_reg;
    perr_qn_reg <= o_qn_reg;
    perr_id_reg <= o_ent_reg[ID_W-1:0];
    perr_reason_reg <= !c_en_next ? 2'd3 : o_qn_reg == 2'd3 ? 2'd2 : 2'd1;
    berr_valid_reg <= b_go && m_axi_bresp[1];
    berr_conn_reg <= bq_out_data;
    berr_resp_reg <= m_axi_bresp;
    if (rst) begin
        drop_valid_reg <= 1'b0;
        drop_count_reg <= 32'd0;
        perr_valid_reg <= 1'b0;
        berr_valid_reg <= 1'b0;
    end
end

assign m_drop_valid = drop_valid_reg;
assign m_drop_conn = drop_conn_reg;
assign m_drop_reason = 2'd1;
assign m_drop_first = drop_first_reg;
assign m_drop_count = drop_count_reg;
assign m_post_err_valid = perr_valid_reg;
assign m_post_err_conn = perr_conn_reg;
assign m_post_err_qn = perr_qn_reg;
assign m_post_err_id = perr_id_reg;
assign m_post_err_reason = perr_reason_reg;
assign m_berr_valid = berr_valid_reg;
assign m_berr_conn = berr_conn_reg;
assign m_berr_resp = berr_resp_reg;

assign m_cpl_valid = cpl_valid_reg;
assign m_cpl_conn = ev_conn_reg;
assign {m_cpl_opcode, m_cpl_tagged, m_cpl_qn, m_cpl_msn, m_cpl_len, m_cpl_id, m_cpl_stag,
        m_cpl_inv_stag} = ev_rec_reg[RECC_W-3:16];
assign m_cpl_rr = ev_rr_reg;
assign m_err_valid = err_valid_reg;
assign m_err_conn = ev_conn_reg;
assign {m_err_layer, m_err_etype, m_err_code} = ev_err_reg;

// Not needed: the verdict's conn (the record's is the same), BID (one AXI
// ID: responses in AW order), the remote read right (placement needs write), the
// low halves of the double-width rotations, the sum of TO + length (only
// its carry), the record's kind and error fields on m_cpl.
wire unused_ok = &{1'b0, s_verdict_tuser, m_axi_bid, st_acc[1],
    rot_d_cur[DATA_W-1:0], rot_d_prev[DATA_W-1:0], rot_k_cur[KEEP_W-1:0], rot_k_prev[KEEP_W-1:0],
    c2_toend[63:0], ev_rec_reg[RECC_W-1 -: 2], ev_rec_reg[15:0], s_ext};

endmodule

`resetall
