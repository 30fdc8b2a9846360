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
// frame per piece, lane-0 aligned, tuser = {early, ulpdu_len[15:0], conn,
// first, last}. The low CONN_W+2 bits are the README's; ulpdu_len, the ULPDU's
// whole length (MPA's ULPDU_Length, which mpa_rx reads before the first
// octet), is this block's addition and the same on every piece of the
// ULPDU: without it no bounds or length check of 7.1 could be made before
// the first piece is written. The first piece of a ULPDU holds at least 46
// octets for an untagged Read Request or Terminate (RDMAP opcode 1 or 7),
// 18 for any other untagged ULPDU, 14 for a tagged one, or the whole ULPDU
// (rx_join's guarantee: the header this block reads, octets 0..13 of a
// tagged ULPDU, 0..17 of an untagged one and 18..45 of those two).
//
// Early ULPDUs (early = 1; mpa_rx_ooo's m_early in rnic_rx): a whole ULPDU
// (first and last are taken as set) that an LLP found out of order, to be
// placed before its turn, as iwarp/ddp's Sink.Place does: every check of
// the list below but the last segment's order, made against the
// connection's state when it comes (after every piece ahead of it), and
// the payload written if they all pass. Nothing else: no verdict is taken
// for it, nothing is reported on m_cpl or m_err, a failed check is not an
// error (the ULPDU is simply not placed; its in-order copy will report
// the error, if it is one then), no queue advances, no STag is
// invalidated, and a connection that is not enabled or has failed places
// nothing of it (and m_drop does not report it). It is placed again, with
// the same octets, when it comes in order; m_done reports it as any ULPDU.
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
// for an error response past the oldest undelivered ULPDU's bursts until
// that ULPDU is delivered, so the error is charged to the right ULPDU
// (BREADY looks at BRESP for this); OKAY responses are taken as they come,
// up to 2^(BQ_AW+1) bursts past the oldest undelivered ULPDU's (one that
// waits for its verdict or for m_cpl/m_err), and from there on wait for
// that ULPDU's delivery too. (Every response also waits the one clock in
// which a ULPDU's delivery record moves up to be the oldest, when there
// was none.)
//
// Host memory, m_wr_* (WR_REQ = 1, with AXI_W = 2 DATA_W; the AXI4 port
// is then idle, its valids low): a write-request stream in its place, as a
// PCIe DMA engine or a memory controller with two interleaved halves takes
// it. A request (valid/ready) writes two N-octet lines from a line address:
// octet j of m_wr_data goes to m_wr_addr + j where bit j of m_wr_strb is
// set; m_wr_addr is a multiple of N, and a request never crosses 4 KiB
// unless its second line is a payload's last octets at the next BURST
// block (the rule below). The same writes as on the AXI4 port, grouped
// two lines a request instead of into aligned 2N-octet beats, so that a
// short payload at any host offset (at most two lines) is one request
// and 64-octet FPDUs place one a clock at W = 512. A request may carry
// no strobes (a burst's pad beats, below). m_wr_last marks a burst's last
// request. Writes are posted: a ULPDU's delivery waits until its bursts'
// last requests have gone instead of for B responses (m_berr never
// pulses).
//
// Configuration (valid/ready each, in priority conn > stag > post; each
// takes effect for the pieces after it): taken between pieces, once every
// piece taken in before it has left placement (a pending request holds
// s_axis_tready low at the next piece's start until then):
//   s_conn:  conn, enable, pd. (Re)starts a connection: enable, PD, every
//            queue empty with MSN 1 next (RFC 5041 4.3), no error. A
//            disabled (or never configured) connection places nothing and
//            reports nothing on m_cpl/m_err, whatever the verdicts; each of
//            its pieces is reported on m_drop. Restart a connection only
//            once its earlier ULPDUs are delivered (each verdict taken and
//            report out) and their bursts answered: the clear of its
//            error state takes effect at once, so a ULPDU of the old
//            stream delivered after it would be reported against the new
//            state. The block does not check this (waiting here for
//            verdicts could wait on the piece behind the request).
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
//          the payload of its one segment. A Terminate is delivered as a
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
//   m_done:     a ULPDU's last piece has left placement (conn): every
//               write of the ULPDU is in the AW/W queues or out.
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
//   on the last segment: Read Request not in one segment of 28 octets
//     (MO 0 and 28 octets of payload; a message length of 28 made of
//     several segments is refused too) 0/2/7;
//     Send with Invalidate of an STag not valid or not of this stream's
//     PD/binding 0/1/9.
// Effects take place in the order of the ULPDUs' first pieces, whatever
// their verdicts: the placement, the queue's advance to the next MSN, the
// invalidation of a Send with Invalidate's STag, the end of placement
// after an error or a Terminate. A ULPDU of another connection that is
// already being placed finishes through an STag invalidated meanwhile.
//
// Structure (one piece a clock through the checks, one beat a clock
// through placement, with queues between):
//   intake   every beat into df_fifo (16 beats), and per piece a header
//            record (tuser, octets 0..17, the payload length) into hf_fifo
//            once the header is in: at the first beat for W >= 256. At
//            W=64 a first piece's beat 0 (header octets only) is not
//            queued for placement unless it ends the piece (drop).
//   H        the context, STag entry and posted buffer of the record are
//            read, with addresses taken from the header as it is: the
//            record at hf_fifo's head or, when hf_fifo is empty and the
//            checks move, the record in the clock it is made (it goes on
//            to C1 without entering hf_fifo).
//   C1       header classification; the first clock of the checks' sums
//            (7.1) on what was read (sum72a on 8-bit chunks, carry-save
//            for three or four operands, equalities by sumeq).
//   C1b      the sums' second clock (sum72b) and the comparisons, each
//            the sign of a sum.
//   C2       the decision, in the order above, and its effects written
//            back. A piece's table reads miss the effects of the three
//            pieces ahead of it: C2 takes those from the last three
//            decisions (the context, the deliveries of each queue, the
//            invalidated STag indexes) instead, with the matches worked
//            out as the pieces move up (fs, fq, fk), the connection's
//            B-response error bit looked up over C1b and C2, and a
//            queue's new head taken as the delivered MSN + 1. The check
//            pipeline stops only when the descriptor queue is full.
//   D0       set-up of a piece's placement (rotation, first address,
//            write range), from sums made ahead: in C2 for a first piece
//            (pl_setup, for both addresses the decision may pick), and
//            for a piece that continues a ULPDU, which waits until
//            placement is empty, over two clocks that read where the
//            last one ended and work out the same sums.
//   D1       one input beat a clock, rotated to the host address; a piece
//            that ends its ULPDU needs no extra clock unless its payload
//            spills into one more output beat. A piece loaded while D1 is
//            idle whose first input beat writes nothing takes that beat
//            with the load (d_prime). A burst's W beats go once its AW is
//            valid (AXI4 A3.3.1), so the first W goes with the first AW.
//   D2       the piece's end: the delivery record for a ULPDU's last
//            piece; for another, D3 works out where the ULPDU's next piece
//            goes on and D4 writes it to the placement context.
//   V0       delivery, in the order of last pieces: the oldest record,
//            with its connection's dead and herr bits looked up as it
//            comes in (and kept up to date while it waits), meets its
//            verdict and its bursts' B responses.
//
// Throughput: one input beat per clock across back-to-back ULPDUs of one
// piece each, as long as the write port keeps up (a payload at an
// arbitrary host offset may need one write beat more than its ULPDU took
// in); a piece that continues a ULPDU costs about 7 clocks. Measured
// figures (tests/ddp_rx bench: one-FPDU RDMA Writes back to back, FPDUs
// of 64 to 9000 octets, input beats per clock, the write port's share,
// and the latency from the clock a first piece's first beat is offered to
// its first AW and W): README, "Hardware figures".
//
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
    parameter BQ_AW = 4,
    parameter AXI_W = DATA_W,
    parameter WR_REQ = 0
) (
    input  wire                    clk,
    input  wire                    rst,

    input  wire [DATA_W-1:0]       s_axis_tdata,
    input  wire [DATA_W/8-1:0]     s_axis_tkeep,
    input  wire                    s_axis_tvalid,
    output wire                    s_axis_tready,
    input  wire                    s_axis_tlast,
    input  wire [CONN_W+19-1:0]    s_axis_tuser,

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
    output wire [AXI_W-1:0]        m_axi_wdata,
    output wire [AXI_W/8-1:0]      m_axi_wstrb,
    output wire                    m_axi_wlast,
    output wire                    m_axi_wvalid,
    input  wire                    m_axi_wready,
    input  wire [0:0]              m_axi_bid,
    input  wire [1:0]              m_axi_bresp,
    input  wire                    m_axi_bvalid,
    output wire                    m_axi_bready,

    output wire [ADDR_W-1:0]       m_wr_addr,
    output wire [AXI_W-1:0]        m_wr_data,
    output wire [AXI_W/8-1:0]      m_wr_strb,
    output wire                    m_wr_last,
    output wire                    m_wr_valid,
    input  wire                    m_wr_ready,

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
    output wire [1:0]              m_berr_resp,
    output wire                    m_done_valid,
    output wire [CONN_W-1:0]       m_done_conn
);

localparam KEEP_W = DATA_W / 8;               // lanes, N
localparam LG = $clog2(KEEP_W);
localparam HB = (18 + KEEP_W - 1) / KEEP_W;   // beats that hold an untagged header
localparam HBT = (14 + KEEP_W - 1) / KEEP_W;  // beats that hold a tagged one
// At W=64 a first piece's beat 0 holds header octets only (every DDP
// header is 14 or more): it is not queued for placement unless it is
// the piece's last (DROP0; see the intake).
localparam integer DROP0 = (KEEP_W < 14) ? 1 : 0;
localparam BW = $clog2(BURST);
localparam NCONN = 1 << CONN_W;
localparam RG_AW = CONN_W + 2 + RQ_AW;        // {conn, qn, slot}
localparam integer KEEP_WI = KEEP_W;
localparam [17:0] N18 = KEEP_WI[17:0];

// Per-queue state: {first MSN, count}. The buffer for MSN m is in ring
// slot m mod 2^RQ_AW, so the slot of a ULPDU's buffer comes straight from
// its header and can be read while the queue state is.
localparam Q_W = 32 + RQ_AW + 1;
// Delivery record of a ULPDU: {kind, opcode, tagged, qn, msn, len, id,
// stag, inv_stag, layer, etype, code}.
localparam RECC_W = 2 + 4 + 1 + 2 + 32 + 32 + ID_W + 32 + 32 + 4 + 4 + 8;
// Check context of a connection: {enable, pd, fail, q2, q1, q0}.
localparam CX_W = 1 + 32 + 1 + 3 * Q_W;
// Placement context of a connection, between the pieces of a ULPDU:
// {place, nxt, remain, rec, rr}.
localparam DX_W = 1 + ADDR_W + 16 + RECC_W + 224;
// STag entry: {valid, key, pd, bound, conn, access, base, len, addr}.
localparam ST_W = 1 + 8 + 32 + 1 + CONN_W + 2 + 64 + 32 + ADDR_W;
// Posted buffer: {addr, len, id}.
localparam RG_W = ADDR_W + 32 + ID_W;
localparam MK_W = BQ_AW + 3;                 // burst counts, modulo 2^MK_W (see b_hold)
localparam RF_W = 1 + MK_W + CONN_W + RECC_W + 224;    // {enabled, mark, conn, rec, rr}
// Header record of a piece: {drop, early, short, n, ulen, conn, first,
// octets 0..17}; n = ulen - header length, short = ulen < header length,
// drop = its beat 0 was not queued for placement (W=64, see the intake).
localparam HF_W = 1 + 1 + 1 + 16 + 16 + CONN_W + 1 + 144;
// Input beat: {data, keep, tlast, ULPDU last}.
localparam DF_W = DATA_W + KEEP_W + 2;
// Placement set-up of a piece (pl_setup): {r, m0, ylo, left, q1}.
localparam SU_W = LG + 3 + LG + 18 + 20;
// Placement descriptor of a piece: {early, conn, first, enabled, place,
// dest, s, remain, rec, set-up}.
localparam DC_W = 1 + CONN_W + 3 + ADDR_W + 5 + 16 + RECC_W + SU_W;

localparam [1:0] K_NONE = 2'd0, K_CPL = 2'd1, K_ERR = 2'd2, K_TERM = 2'd3;
localparam [1:0] D_DATA = 2'd0, D_FLUSH = 2'd1, D_PAD = 2'd2;

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
    if (ADDR_W < 32 || ADDR_W > 64) begin
        $error("ddp_rx: ADDR_W must be 32..64, got %0d", ADDR_W);
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
    if (AXI_W != DATA_W && AXI_W != 2 * DATA_W) begin
        $error("ddp_rx: AXI_W must be DATA_W or 2 DATA_W, got %0d", AXI_W);
        $finish;
    end
    if (WR_REQ != 0 && (WR_REQ != 1 || AXI_W != 2 * DATA_W)) begin
        $error("ddp_rx: WR_REQ must be 0, or 1 with AXI_W = 2 DATA_W, got %0d (AXI_W %0d)", WR_REQ, AXI_W);
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

// Octets in a tkeep that is a run from lane 0: the run's last lane b
// (lane b kept, lane b + 1 not) gives b + 1, each bit of the count an OR
// over the lanes whose b + 1 has it set (3 LUT levels at N = 64; a
// priority search from lane 0 up maps as a chain, 12).
function [LG:0] keep_count(input [KEEP_W-1:0] k);
    integer b;
    reg [KEEP_W:0] e;
    reg [LG:0] v;
    begin
        e = {1'b0, k} & ~({1'b0, k} >> 1);      // e[b]: lane b is the run's last
        keep_count = {(LG+1){1'b0}};
        for (b = 0; b < KEEP_W; b = b + 1) begin
            v = b[LG:0] + 1'b1;
            keep_count = keep_count | (v[LG:0] & {(LG+1){e[b]}});
        end
    end
endfunction

function [DATA_W-1:0] expand(input [KEEP_W-1:0] m);
    integer b;
    begin
        for (b = 0; b < KEEP_W; b = b + 1) begin
            expand[8*b +: 8] = {8{m[b]}};
        end
    end
endfunction

// gt33 (a > b) and fadd ({carry, sum} of x + y + ci) as trees.
`include "rnic_arith.vh"
// Terminate error words ERR_* (generated from the Go model: internal/hdlcodes).
`include "rnic_codes.vh"



// pl_setup(dlo, s, remain): what placement needs of a piece whose first
// payload octet goes to a host address with low bits dlo, at octet s of
// the piece, with remain payload octets to the end of the ULPDU. Octet g
// of the piece is output octet g + r, r = (dlo - s) mod N; the payload's
// output octets run from gs = s + r (gs = dlo mod N) to end = gs + remain
// - 1. Fields: r; m0 = gs / N, the output beat of the first payload octet;
// ylo = end mod N, the last payload octet's lane; left = (dlo + remain +
// N - 1) / N, the output beats the payload takes; q1 = m1 - 2, m1 = end /
// N the output beat of the last payload octet (-1 for no payload), as a
// 20-bit two's complement count. gs is at most 31 + N - 1, so m0 at most
// 4. The two sums are fadd trees; q1 = (remain + gs - 1 - 2N) >> LG,
// arithmetic, in one sum.
function [SU_W-1:0] pl_setup(input [LG-1:0] dlo, input [4:0] s, input [15:0] remain);
    reg [7:0] s8;
    reg [9:0] gs;
    reg [LG-1:0] r, ylo;
    reg [19:0] yq, q1;
    // (Only some bits of the sums are wanted.)
    /* verilator lint_off UNUSEDSIGNAL */
    reg [32:0] sl, sq;
    /* verilator lint_on UNUSEDSIGNAL */
    begin
        s8 = {3'd0, s};
        r = dlo - s8[LG-1:0];
        gs = {2'd0, s8} + {{(10-LG){1'b0}}, r};
        ylo = dlo + remain[LG-1:0] - 1'b1;
        sl = fadd({16'd0, remain}, {{(32-LG-1){1'b0}}, 1'b0, dlo} + KEEP_WI - 1, 1'b0);
        yq = {10'd0, gs} - 20'd1 - {1'b0, N18[17-1:0], 1'b0};
        sq = fadd({16'd0, remain}, {12'd0, yq}, 1'b0);
        q1 = sq[19:0] >> LG;
        q1 = q1 | ~({20{1'b1}} >> LG) & {20{sq[19]}};
        if (remain == 16'd0) begin
            q1 = 20'hffffd;          // m1 = -1
        end
        pl_setup = {r, gs[LG +: 3], ylo, sl[LG +: 18], q1};
    end
endfunction

// Queue qn of a check context.
function [Q_W-1:0] cx_q(input [3*Q_W-1:0] cx, input [1:0] qn);
    case (qn)
        2'd1: cx_q = cx[Q_W +: Q_W];
        2'd2: cx_q = cx[2*Q_W +: Q_W];
        default: cx_q = cx[0 +: Q_W];
    endcase
endfunction

localparam [Q_W-1:0] Q_INIT = {32'd1, {(RQ_AW+1){1'b0}}};

// --- state shared with configuration -------------------------------------------

// Connections that took an error B response (SLVERR, DECERR) since their
// last (re)start: nothing more of them is placed, and the next delivery
// record of the connection reports a Local Catastrophic Error.
reg [NCONN-1:0]        herr_reg = {NCONN{1'b0}};
wire                   herr_set;               // herr_reg[herr_set_conn] is set at this edge
wire [CONN_W-1:0]      herr_set_conn;
reg [NCONN-1:0]        dead_reg = {NCONN{1'b0}};

// --- tables -----------------------------------------------------------------

reg                  cx_wr_en;
reg  [CONN_W-1:0]    cx_wr_addr;
reg  [CX_W-1:0]      cx_wr_data;
reg                  cx_rd_en;
reg  [CONN_W-1:0]    cx_rd_addr;
wire [CX_W-1:0]      cx_rd_data;

sdp_ram #(.WIDTH(CX_W), .ADDR_W(CONN_W)) ctx_ram (
    .clk(clk),
    .wr_en(cx_wr_en), .wr_addr(cx_wr_addr), .wr_data(cx_wr_data),
    .rd_en(cx_rd_en), .rd_addr(cx_rd_addr), .rd_data(cx_rd_data)
);

// The placement context, written at the end of every piece that does not
// end its ULPDU and read by the next piece of the same ULPDU (which may
// come after pieces of other connections). A Read Request's body (octets
// 18..45 of its ULPDU) travels in it from the first piece to the last.
reg                  dx_wr_en;
reg  [CONN_W-1:0]    dx_wr_addr;
reg  [DX_W-1:0]      dx_wr_data;
reg                  dx_rd_en;
reg  [CONN_W-1:0]    dx_rd_addr;
wire [DX_W-1:0]      dx_rd_data;

sdp_ram #(.WIDTH(DX_W), .ADDR_W(CONN_W)) place_ram (
    .clk(clk),
    .wr_en(dx_wr_en), .wr_addr(dx_wr_addr), .wr_data(dx_wr_data),
    .rd_en(dx_rd_en), .rd_addr(dx_rd_addr), .rd_data(dx_rd_data)
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

// Second push ports of the queues that take one word a clock.
wire [5:0]           fifo_ready2_unused;

// --- intake: beats into df_fifo, one header record per piece into hf_fifo ----

reg                  cf_post_reg = 1'b0;      // a post between its context read and write
wire                 cfg_pending = s_conn_valid || s_stag_valid || s_post_valid || cf_post_reg;

reg                  i_inpiece_reg = 1'b0;    // inside a piece (its first beat taken)
reg  [1:0]           i_hcnt_reg = 2'd0;       // header beats taken (saturates at HB)
reg                  i_hdone_reg = 1'b0;      // the piece's header record is out
reg  [143:0]         i_hdr_reg = 144'd0;
reg  [17+CONN_W:0]   i_user_reg = 0;          // {early, ulen, conn, first}

wire                 df_in_ready, hf_in_ready;
// Configuration waits for the pipeline to drain and is taken between
// pieces: no new piece starts while one is waiting.
wire                 i_hold = !i_inpiece_reg && cfg_pending;
assign s_axis_tready = df_in_ready && hf_in_ready && !i_hold;
wire                 i_take = s_axis_tvalid && s_axis_tready;

// An early piece is a whole ULPDU: first and last whatever tuser says.
wire                 i_early = s_axis_tuser[CONN_W+18];
wire [17+CONN_W:0]   i_user = i_inpiece_reg ? i_user_reg : {s_axis_tuser[CONN_W+18:2], s_axis_tuser[1] || i_early};
wire                 i_ulast = s_axis_tuser[0] || (i_inpiece_reg ? i_user_reg[17+CONN_W] : i_early);
wire [1:0]           i_hcnt = i_inpiece_reg ? i_hcnt_reg : 2'd0;
wire                 i_hdone = i_inpiece_reg && i_hdone_reg;
reg  [143:0]         i_hdr;
reg                  i_hpush;
// The payload length, n = ulen - header length (14 or 18 octets by the T
// bit, octet 0 bit 7: RFC 5041 4.2, 4.3), and short = ulen < header
// length, from the first beat's tuser and T, kept for the later beats.
wire [15:0]          i_ulen_t = s_axis_tuser[CONN_W+17:CONN_W+2];
wire [32:0]          i_n14_t = fadd({16'd0, i_ulen_t}, 32'h0000fff1, 1'b1);
wire [32:0]          i_n18_t = fadd({16'd0, i_ulen_t}, 32'h0000ffed, 1'b1);
wire                 i_t_t = s_axis_tdata[7];
wire [16:0]          i_ns_t = i_t_t ? {i_ulen_t < 16'd14, i_n14_t[15:0]} : {i_ulen_t < 16'd18, i_n18_t[15:0]};
reg  [16:0]          i_ns_reg = 17'd0;       // {short, n}
wire [16:0]          i_ns = i_inpiece_reg ? i_ns_reg : i_ns_t;
// Beat 0 of a first piece that goes on (W=64): header only, so it goes
// into the header record but not into df_fifo; the record says so (drop)
// and placement counts the piece from its beat 1, as if its header were
// KEEP_W octets shorter (C1's h_hlen).
reg                  i_drop_reg = 1'b0;
wire                 i_drop0 = DROP0 != 0 && !i_inpiece_reg && i_user[0] && !s_axis_tlast;
wire                 i_drop = i_inpiece_reg ? i_drop_reg : i_drop0;

always @* begin : intake_hdr
    integer o;
    i_hdr = i_inpiece_reg ? i_hdr_reg : 144'd0;
    for (o = 0; o < 18; o = o + 1) begin
        if ({30'd0, i_hcnt} == o / KEEP_W) begin
            i_hdr[8*o +: 8] = s_axis_tdata[8*(o % KEEP_W) +: 8];
        end
    end
    // A later piece's record goes out with its first beat; a first
    // piece's once its header is in (or at its end, if shorter): 18
    // octets, or 14 when it is tagged (T, octet 0 bit 7; octets 14..17 of
    // the record are then payload or zero, and no check of a tagged
    // segment reads them).
    i_hpush = i_take && !i_hdone && (!i_user[0] || s_axis_tlast || {30'd0, i_hcnt} == HB - 1
                                     || (i_hdr[7] && {30'd0, i_hcnt} == HBT - 1));
end

always @(posedge clk) begin
    if (i_take) begin
        i_inpiece_reg <= !s_axis_tlast;
        i_user_reg <= i_user;
        i_hdr_reg <= i_hdr;
        i_hcnt_reg <= ({30'd0, i_hcnt} == HB) ? i_hcnt : i_hcnt + 2'd1;
        i_hdone_reg <= i_hdone || i_hpush;
        i_ns_reg <= i_ns;
        i_drop_reg <= i_drop;
    end
    if (rst) begin
        i_inpiece_reg <= 1'b0;
        i_hcnt_reg <= 2'd0;
        i_hdone_reg <= 1'b0;
    end
end

wire [DF_W-1:0]      df_out;
wire                 df_out_valid;
wire                 df_out_ready;

ddp_rx_fifo #(.WIDTH(DF_W), .AW(4)) df_fifo (
    .clk(clk), .rst(rst),
    .in_data({s_axis_tdata, s_axis_tkeep, s_axis_tlast, i_ulast}), .in_valid(i_take && !i_drop0),
    .in_data2({s_axis_tdata, s_axis_tkeep, s_axis_tlast, i_ulast}), .in_valid2(1'b0), .in_ready2(fifo_ready2_unused[0]),
    .in_ready(df_in_ready),
    .out_data(df_out), .out_valid(df_out_valid), .out_ready(df_out_ready)
);

wire [HF_W-1:0]      hf_out;
wire                 hf_out_valid;
wire                 c_adv;

// The record of the piece at H: hf_fifo's head, or, when hf_fifo is empty
// and the check pipeline moves, the record being made (h_thru: it goes
// straight on to C1 and never into hf_fifo, a clock saved).
wire [HF_W-1:0]      i_rec = {i_drop, i_user[17+CONN_W], i_ns, i_user[16+CONN_W:0], i_hdr};
wire                 h_thru = i_hpush && !hf_out_valid && c_adv;
wire                 h_valid = hf_out_valid || i_hpush;
wire [HF_W-1:0]      h_rec = hf_out_valid ? hf_out : i_rec;

ddp_rx_fifo #(.WIDTH(HF_W), .AW(3)) hf_fifo (
    .clk(clk), .rst(rst),
    .in_data(i_rec), .in_valid(i_hpush && !h_thru),
    .in_data2(i_rec), .in_valid2(1'b0), .in_ready2(fifo_ready2_unused[1]),
    .in_ready(hf_in_ready),
    .out_data(hf_out), .out_valid(hf_out_valid), .out_ready(c_adv)
);

// --- check pipeline: H (table reads), C1, C1b (checks), C2 (decision) ---------
//
// One piece a clock. The three tables are read at H with addresses taken
// straight from the header record; C2 decides and writes the effects
// (queue advance, failure, invalidation) back. A piece reads its tables
// before the three pieces ahead of it have written theirs: C2 takes their
// effects from hist (the last three decisions, in pipeline order) instead.
// Everything moves together (c_adv), when the descriptor queue has room.

wire                 dc_in_ready;
assign c_adv = dc_in_ready;

wire [CONN_W-1:0]    hf_conn = h_rec[145 +: CONN_W];
wire [143:0]         hf_hdr = h_rec[143:0];
wire [31:0]          hf_idx32 = be32(hf_hdr, 2);

reg                  c1_valid_reg = 1'b0;
reg  [HF_W-1:0]      c1_rec_reg;

always @(posedge clk) begin
    if (c_adv) begin
        c1_valid_reg <= h_valid;
        c1_rec_reg <= h_rec;
    end
    if (rst) begin
        c1_valid_reg <= 1'b0;
    end
end

// C1: the header's fields, the context and the table entries.
wire                 p1_drop = c1_rec_reg[HF_W-1];
wire                 p1_early = c1_rec_reg[HF_W-2];
wire                 p1_short = c1_rec_reg[HF_W-3];
wire [15:0]          p1_n = c1_rec_reg[HF_W-4 -: 16];
wire [CONN_W-1:0]    p1_conn = c1_rec_reg[145 +: CONN_W];
wire                 p1_first = c1_rec_reg[144];
wire [143:0]         hdr = c1_rec_reg[143:0];

reg                    h_t, h_l;
reg [1:0]              h_dv, h_rv;
reg [3:0]              h_op;
reg [31:0]             h_stag, h_qn, h_msn, h_mo;
reg [63:0]             h_to;
reg [4:0]              h_hlen;
reg                    h_short, h_optag;
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
    h_q = cx_q(cx_rd_data[3*Q_W-1:0], h_qn[1:0]);
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
reg [71:0]             x_to, x_nbase, x_n, x_mo, x_nlen, x_nrglen, x_staddr, x_rgaddr;
reg [143:0]            a_cs, a_cs2;
reg [161:0]            a_lt, a_gt, a_dt, a_du, a_mon, a_long;
reg                    a_wrap, a_mo_gt, a_rr_eq;
wire [31:0]            a_msn1;           // MSN + 1 (rnic_incdec: fadd's carry tree took 6 levels)
reg                    c1_stag_bad, c1_assoc_bad;
reg [4*162-1:0]        a_sg;            // d_j's sign, first clock
reg [3:0]              a_uz, a_z;       // d_j's bits LQ..31 zero, d_j zero
reg [4*LQ-1:0]         a_low;           // d_j's bits 0..LQ-1
reg [4*(LQ+1)-1:0]     a_cm;            // count - j: the window's size
reg [31:0]             a_kj;
reg [LQ:0]             a_c;
reg [LQ:0]             a_fl, a_dl;      // first + j, MSN - (first + j): low bits, carry/borrow
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
    c1_assoc_bad = st_pd != cx_rd_data[CX_W-2 -: 32] || (st_bound && st_conn != p1_conn);
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
reg                    b_valid_reg = 1'b0;
reg [CONN_W-1:0]       b_conn_reg;
reg                    b_first_reg, b_early_reg;
reg [CX_W-1:0]         b_cx_reg;
reg                    b_t_reg, b_l_reg;
reg [3:0]              b_op_reg;
reg [31:0]             b_stag_reg, b_msn_reg, b_msn1_reg;
reg [1:0]              b_qn_reg;
reg [15:0]             b_n_reg;
reg [4:0]              b_hlen_reg;
reg                    b_cerr_reg;
reg [15:0]             b_cerr_code_reg;
reg                    b_stag_bad_reg, b_assoc_bad_reg, b_acc_reg, b_wrap_reg;
reg                    b_mo_gt_reg, b_rr_eq_reg;
reg [161:0]            b_lt_a, b_gt_a, b_dt_a, b_du_a, b_mon_a, b_long_a;
reg [4*162-1:0]        b_sg_a;
reg [3:0]              b_uz_reg, b_z_reg;
reg [4*LQ-1:0]         b_low_reg;
reg [4*(LQ+1)-1:0]     b_cm_reg;
reg [ID_W-1:0]         b_id_reg;
reg [ST_W-2:0]         b_st_reg;

always @(posedge clk) begin
    if (c_adv) begin
        b_valid_reg <= c1_valid_reg;
        b_conn_reg <= p1_conn;
        b_first_reg <= p1_first;
        b_early_reg <= p1_early;
        b_cx_reg <= cx_rd_data;
        b_t_reg <= h_t;
        b_l_reg <= h_l;
        b_op_reg <= h_op;
        b_stag_reg <= h_stag;
        b_msn_reg <= h_msn;
        b_msn1_reg <= a_msn1;
        b_qn_reg <= h_qn[1:0];
        b_n_reg <= h_n;
        b_hlen_reg <= h_hlen;
        b_cerr_reg <= h_cerr;
        b_cerr_code_reg <= h_cerr_code;
        b_stag_bad_reg <= c1_stag_bad;
        b_assoc_bad_reg <= c1_assoc_bad;
        b_acc_reg <= !st_acc[0];
        b_wrap_reg <= a_wrap;
        b_mo_gt_reg <= a_mo_gt;
        b_rr_eq_reg <= a_rr_eq;
        b_lt_a <= a_lt;
        b_gt_a <= a_gt;
        b_dt_a <= a_dt;
        b_du_a <= a_du;
        b_mon_a <= a_mon;
        b_long_a <= a_long;
        b_sg_a <= a_sg;
        b_uz_reg <= a_uz;
        b_z_reg <= a_z;
        b_low_reg <= a_low;
        b_cm_reg <= a_cm;
        b_id_reg <= rg_id;
        b_st_reg <= st_rd_data[ST_W-2:0];
    end
    if (rst) begin
        b_valid_reg <= 1'b0;
    end
end

// C1b: the sums' second clock, and the window checks: d_j outside 0 ..
// count - j - 1 (its bits above RQ_AW not zero, or its low bits at or past
// count - j).
reg [72:0]             bs_lt, bs_gt, bs_dt, bs_du, bs_mon, bs_long;
reg [3:0]              bs_nobuf, bs_behind;
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

// C2 registers.
reg                    c2_valid_reg = 1'b0;
reg [CONN_W-1:0]       c2_conn_reg;
reg                    c2_first_reg, c2_early_reg;
reg [CX_W-1:0]         c2_cx_reg;
reg                    k_tagged_reg, k_l_reg;
reg [3:0]              k_op_reg;
reg [31:0]             k_stag_reg, k_msn_reg, k_msn1_reg;
reg [1:0]              k_qn_reg;
reg [15:0]             k_n_reg;
reg [4:0]              k_hlen_reg;
reg                    k_cerr_reg;
reg [15:0]             k_cerr_code_reg;
reg                    e_t_inv_reg, e_t_assoc_reg, e_t_acc_reg, e_t_wrap_reg, e_t_bounds_reg;
reg [3:0]              e_u_nobuf_reg, e_u_behind_reg, e_u_lorder_reg;
reg                    e_u_mo_reg, e_u_long_reg;
reg                    e_i_bad_reg, e_rr_bad_reg;
reg [ADDR_W-1:0]       e_dt_reg, e_du_reg;
reg [31:0]             e_len_reg;
reg [ID_W-1:0]         e_id_reg;
reg [ST_W-2:0]         e_st_reg;

always @(posedge clk) begin
    if (c_adv) begin
        c2_valid_reg <= b_valid_reg;
        c2_conn_reg <= b_conn_reg;
        c2_first_reg <= b_first_reg;
        c2_early_reg <= b_early_reg;
        c2_cx_reg <= b_cx_reg;
        k_tagged_reg <= b_t_reg;
        k_l_reg <= b_l_reg;
        k_op_reg <= b_op_reg;
        k_stag_reg <= b_stag_reg;
        k_msn_reg <= b_msn_reg;
        k_msn1_reg <= b_msn1_reg;
        k_qn_reg <= b_qn_reg;
        k_n_reg <= b_n_reg;
        k_hlen_reg <= b_hlen_reg;
        k_cerr_reg <= b_cerr_reg;
        k_cerr_code_reg <= b_cerr_code_reg;
        // ddp.STagTable.checkLocked (RFC 5041 7.1, 8.2) for the whole
        // segment, and ddp.Sink.checkUntagged.
        e_t_inv_reg <= b_stag_bad_reg;
        e_t_assoc_reg <= b_assoc_bad_reg;
        e_t_acc_reg <= b_acc_reg;
        e_t_wrap_reg <= b_wrap_reg;
        e_t_bounds_reg <= bs_lt[71] || !bs_gt[71];
        e_dt_reg <= bs_dt[ADDR_W-1:0];
        e_u_nobuf_reg <= bs_nobuf;
        e_u_behind_reg <= bs_behind;
        e_u_lorder_reg <= {4{b_l_reg}} & ~b_z_reg;
        e_u_mo_reg <= b_mo_gt_reg;
        e_u_long_reg <= !bs_long[71];
        e_du_reg <= bs_du[ADDR_W-1:0];
        e_len_reg <= bs_mon[31:0];
        e_id_reg <= b_id_reg;
        // rdmap.Invalidate: ddp.STagTable.InvalidateRemote's checks.
        e_i_bad_reg <= b_stag_bad_reg || b_assoc_bad_reg;
        e_rr_bad_reg <= !b_rr_eq_reg;
        e_st_reg <= b_st_reg;
    end
    if (rst) begin
        c2_valid_reg <= 1'b0;
    end
end

// The last three decisions (0 the newest): {valid, conn, context written,
// popped, popped QN, invalidated, invalidated index}; the oldest needs
// only what fs/fq/fk (below) do not say.
reg                    hs0_valid_reg = 1'b0, hs1_valid_reg = 1'b0;
reg [CONN_W-1:0]       hs0_conn_reg, hs1_conn_reg;
reg [CX_W-1:0]         hs0_cx_reg, hs1_cx_reg, hs2_cx_reg;
reg                    hs0_pop_reg, hs1_pop_reg, hs2_pop_reg;
reg [1:0]              hs0_qn_reg, hs1_qn_reg;
reg                    hs0_inv_reg, hs1_inv_reg, hs2_inv_reg;
reg [STAG_AW-1:0]      hs0_idx_reg, hs1_idx_reg;

// Which of the last three decisions C2's piece must take in, worked out
// as the pieces move up (so C2 has no comparison of its own to make):
// fs, the decision is of the same connection; fq, and of the same queue;
// fk, it invalidated (if it did) the STag index the piece uses. Bit k is
// for hs<k> as it will be after the next move.
reg  [2:0]             fs_reg = 3'd0, fq_reg = 3'd0, fk_reg = 3'd0;
wire [STAG_AW-1:0]     b_idx = b_stag_reg[8 +: STAG_AW];

// herr_reg's bit for C2's piece, looked up over two clocks as the piece
// moves up (a group of 2^HG bits at C1b, then the bit), with what is set
// meanwhile. (No bit is cleared while a piece is in the pipeline:
// configuration waits for it to empty.)
localparam integer HG = CONN_W < 4 ? CONN_W : 4;
localparam integer NHG = 1 << HG;
localparam integer HG_MASK_I = NHG - 1;
localparam [CONN_W-1:0] HG_MASK = HG_MASK_I[CONN_W-1:0];
reg  [NHG-1:0]         b_hgrp_reg = {NHG{1'b0}};
reg                    c2_herr_reg = 1'b0;

function [NHG-1:0] herr_group(input [NCONN-1:0] h, input [CONN_W-1:0] c);
    herr_group = h[c & ~HG_MASK +: NHG];
endfunction

function herr_bit(input [NHG-1:0] g, input [CONN_W-1:0] c);
    integer i;
    begin
        herr_bit = 1'b0;
        for (i = 0; i < NHG; i = i + 1) begin
            if ((c & HG_MASK) == i[CONN_W-1:0]) begin
                herr_bit = g[i];
            end
        end
    end
endfunction

// The bits of c's group set at this edge.
function [NHG-1:0] herr_group_set(input [CONN_W-1:0] c);
    herr_group_set = (herr_set && (herr_set_conn >> HG) == (c >> HG))
                     ? ({{(NHG-1){1'b0}}, 1'b1} << (herr_set_conn & HG_MASK)) : {NHG{1'b0}};
endfunction

always @(posedge clk) begin
    if (c_adv) begin
        b_hgrp_reg <= herr_group(herr_reg, p1_conn) | herr_group_set(p1_conn);
        c2_herr_reg <= herr_bit(b_hgrp_reg, b_conn_reg) || (herr_set && herr_set_conn == b_conn_reg);
    end else begin
        b_hgrp_reg <= b_hgrp_reg | herr_group_set(b_conn_reg);
        c2_herr_reg <= c2_herr_reg || (herr_set && herr_set_conn == c2_conn_reg);
    end
end

// C2: decision, with the effects of the decisions the tables had not seen.
reg                    f_same0, f_same1, f_same2;
reg [CX_W-1:0]         f_cx;
reg [1:0]              f_pops;
reg                    f_killed;
wire [STAG_AW-1:0]     k_idx = k_stag_reg[8 +: STAG_AW];
reg                    t_inv, i_bad, u_nobuf, u_behind, u_lorder;

always @* begin
    {f_same2, f_same1, f_same0} = fs_reg;
    f_cx = f_same0 ? hs0_cx_reg : f_same1 ? hs1_cx_reg : f_same2 ? hs2_cx_reg : c2_cx_reg;
    f_pops = {1'b0, fq_reg[0] && hs0_pop_reg} + {1'b0, fq_reg[1] && hs1_pop_reg}
           + {1'b0, fq_reg[2] && hs2_pop_reg};
    f_killed = (fk_reg[0] && hs0_inv_reg) || (fk_reg[1] && hs1_inv_reg) || (fk_reg[2] && hs2_inv_reg);
    t_inv = e_t_inv_reg || f_killed;
    i_bad = e_i_bad_reg || f_killed;
    u_nobuf = e_u_nobuf_reg[f_pops];
    u_behind = e_u_behind_reg[f_pops];
    u_lorder = e_u_lorder_reg[f_pops];
end

// Queue state after popping the head (a delivered untagged message): a
// pop is of the oldest MSN (the checks allow no other), so the new head is
// the message's MSN + 1 (msn1, worked out at C1), and C2 needs no sum.
function [Q_W-1:0] q_pop(input [RQ_AW:0] cnt, input [31:0] msn1);
    q_pop = {msn1, cnt - 1'b1};
endfunction

reg [1:0]              r_kind;
reg [15:0]             r_err;
reg                    r_place;
reg                    r_pop;
reg                    r_inval;
reg [ADDR_W-1:0]       r_dest;
reg [RECC_W-1:0]       r_rec;
reg                    c_en, c_fail;
reg [CX_W-1:0]         r_cx;

always @* begin
    c_en = c2_cx_reg[CX_W-1];
    c_fail = f_cx[CX_W-34];
    r_kind = K_NONE;
    r_err = 16'd0;
    r_place = 1'b0;
    r_pop = 1'b0;
    r_inval = 1'b0;
    r_dest = e_du_reg;
    if (c_fail || !c_en || c2_herr_reg) begin
        r_kind = K_NONE;            // the stream has failed: dropped
    end else if (k_cerr_reg) begin
        r_kind = K_ERR;
        r_err = k_cerr_code_reg;
    end else if (k_tagged_reg) begin
        r_dest = e_dt_reg;
        if (k_n_reg != 16'd0 && t_inv) begin
            r_kind = K_ERR;
            r_err = ERR_DDP_INVALID_STAG;       // DDP tagged: invalid STag
        end else if (k_n_reg != 16'd0 && e_t_assoc_reg) begin
            r_kind = K_ERR;
            r_err = ERR_DDP_STAG_NOT_ASSOCIATED;       // DDP tagged: STag not associated with stream
        end else if (k_n_reg != 16'd0 && e_t_acc_reg) begin
            r_kind = K_ERR;
            r_err = ERR_RDMAP_ACCESS_RIGHTS;       // RDMAP remote protection: access rights
        end else if (k_n_reg != 16'd0 && e_t_wrap_reg) begin
            r_kind = K_ERR;
            r_err = ERR_DDP_TO_WRAP;       // DDP tagged: TO wrap
        end else if (k_n_reg != 16'd0 && e_t_bounds_reg) begin
            r_kind = K_ERR;
            r_err = ERR_DDP_BASE_BOUNDS;       // DDP tagged: base or bounds
        end else begin
            r_place = k_n_reg != 16'd0;
            r_kind = k_l_reg ? K_CPL : K_NONE;
        end
    end else begin
        if (u_nobuf) begin
            r_kind = K_ERR;
            r_err = u_behind ? ERR_DDP_MSN_RANGE : ERR_DDP_NO_BUFFER;
        end else if (e_u_mo_reg) begin
            r_kind = K_ERR;
            r_err = ERR_DDP_INVALID_MO;       // DDP untagged: invalid MO
        end else if (e_u_long_reg) begin
            r_kind = K_ERR;
            r_err = ERR_DDP_TOO_LONG;       // DDP untagged: message too long
        end else if (u_lorder && !c2_early_reg) begin
            r_kind = K_ERR;
            r_err = ERR_DDP_MSN_RANGE;       // DDP untagged: MSN range
        end else begin
            r_place = k_n_reg != 16'd0;
            r_pop = k_l_reg;
            if (!k_l_reg) begin
                r_kind = K_NONE;
            end else if (k_op_reg == 4'd1 && e_rr_bad_reg) begin
                r_kind = K_ERR;
                r_err = ERR_RDMAP_STREAM_CATASTROPHIC;   // rdmap.DeliveredReadRequest: not one 28-octet segment
            end else if (k_op_reg == 4'd7) begin
                r_kind = K_TERM;
            end else if ((k_op_reg == 4'd4 || k_op_reg == 4'd6) && i_bad) begin
                r_kind = K_ERR;
                r_err = ERR_RDMAP_CANNOT_INVALIDATE;   // RDMAP remote protection: cannot invalidate
            end else begin
                r_kind = K_CPL;
                r_inval = k_op_reg == 4'd4 || k_op_reg == 4'd6;
            end
        end
    end
    if (c2_early_reg) begin
        // Placed early (ddp.Sink.Place): the checks above, but for the
        // last-segment order, decide whether it is placed, and that is
        // all. Nothing is reported, delivered or changed.
        r_kind = K_NONE;
        r_err = 16'd0;
        r_pop = 1'b0;
        r_inval = 1'b0;
    end
    r_cx = {c2_cx_reg[CX_W-1 -: 33], c_fail || r_kind == K_ERR || r_kind == K_TERM, f_cx[3*Q_W-1:0]};
    if (r_pop) begin
        case (k_qn_reg)
            2'd1: r_cx[Q_W +: Q_W] = q_pop(f_cx[Q_W +: RQ_AW+1], k_msn1_reg);
            2'd2: r_cx[2*Q_W +: Q_W] = q_pop(f_cx[2*Q_W +: RQ_AW+1], k_msn1_reg);
            default: r_cx[0 +: Q_W] = q_pop(f_cx[0 +: RQ_AW+1], k_msn1_reg);
        endcase
    end
    if (k_tagged_reg) begin
        r_rec = {r_kind, k_op_reg, 1'b1, 2'd0, 32'd0, 32'd0, {ID_W{1'b0}}, k_stag_reg, 32'd0, r_err};
    end else begin
        r_rec = {r_kind, k_op_reg, 1'b0, k_qn_reg, k_msn_reg, e_len_reg, e_id_reg, 32'd0,
                 r_inval ? k_stag_reg : 32'd0, r_err};
    end
end

wire                   c2_go = c_adv && c2_valid_reg;
wire                   c2_decide = c2_go && c2_first_reg;

always @(posedge clk) begin
    if (c_adv) begin
        hs2_cx_reg <= hs1_cx_reg;
        hs2_pop_reg <= hs1_pop_reg;
        hs2_inv_reg <= hs1_inv_reg;
        hs1_valid_reg <= hs0_valid_reg;
        hs1_conn_reg <= hs0_conn_reg;
        hs1_cx_reg <= hs0_cx_reg;
        hs1_pop_reg <= hs0_pop_reg;
        hs1_qn_reg <= hs0_qn_reg;
        hs1_inv_reg <= hs0_inv_reg;
        hs1_idx_reg <= hs0_idx_reg;
        hs0_valid_reg <= c2_valid_reg && c2_first_reg;
        fs_reg <= {hs1_valid_reg && hs1_conn_reg == b_conn_reg, hs0_valid_reg && hs0_conn_reg == b_conn_reg,
                   c2_valid_reg && c2_first_reg && c2_conn_reg == b_conn_reg};
        fq_reg <= {hs1_valid_reg && hs1_conn_reg == b_conn_reg && hs1_qn_reg == b_qn_reg,
                   hs0_valid_reg && hs0_conn_reg == b_conn_reg && hs0_qn_reg == b_qn_reg,
                   c2_valid_reg && c2_first_reg && c2_conn_reg == b_conn_reg && k_qn_reg == b_qn_reg};
        fk_reg <= {hs1_valid_reg && hs1_idx_reg == b_idx, hs0_valid_reg && hs0_idx_reg == b_idx,
                   c2_valid_reg && c2_first_reg && k_idx == b_idx};
        hs0_conn_reg <= c2_conn_reg;
        hs0_cx_reg <= r_cx;
        hs0_pop_reg <= r_pop;
        hs0_qn_reg <= k_qn_reg;
        hs0_inv_reg <= r_inval;
        hs0_idx_reg <= k_idx;
    end
    if (rst) begin
        hs0_valid_reg <= 1'b0;
        hs1_valid_reg <= 1'b0;
        fs_reg <= 3'd0;
        fq_reg <= 3'd0;
        fk_reg <= 3'd0;
    end
end

// Descriptors to placement.
// The placement set-up of a first piece is worked out here, from the
// registers alone, for both addresses the decision may pick (a tagged
// segment's e_dt or an untagged one's e_du: the one not picked only matters
// when nothing is placed), so that D0 only selects it.
wire [SU_W-1:0]        c2_su_t = pl_setup(e_dt_reg[LG-1:0], k_hlen_reg, k_n_reg);
wire [SU_W-1:0]        c2_su_u = pl_setup(e_du_reg[LG-1:0], k_hlen_reg, k_n_reg);
wire [DC_W-1:0]        dc_in_data = {c2_early_reg, c2_conn_reg, c2_first_reg, c_en, r_place, r_dest, k_hlen_reg, k_n_reg,
                                     r_rec, k_tagged_reg ? c2_su_t : c2_su_u};
wire [DC_W-1:0]        dc_out;
wire                   dc_out_valid;
wire                   dc_out_ready;

ddp_rx_fifo #(.WIDTH(DC_W), .AW(2)) dc_fifo (
    .clk(clk), .rst(rst),
    .in_data(dc_in_data), .in_valid(c2_go), .in_data2(dc_in_data), .in_valid2(1'b0), .in_ready2(fifo_ready2_unused[2]),
    .in_ready(dc_in_ready),
    .out_data(dc_out), .out_valid(dc_out_valid), .out_ready(dc_out_ready)
);

// --- output queues ----------------------------------------------------------

reg                       aw_in_valid;
reg  [ADDR_W+8-1:0]       aw_in_data;
wire                      aw_pop;           // the AW queue's head taken (AWREADY, or a burst's last request)
wire                      aw_in_ready;
wire [ADDR_W+8-1:0]       aw_out_data;
wire                      aw_out_valid;

ddp_rx_fifo #(.WIDTH(ADDR_W + 8), .AW(2)) aw_fifo (
    .clk(clk), .rst(rst),
    .in_data(aw_in_data), .in_valid(aw_in_valid), .in_data2(aw_in_data), .in_valid2(1'b0), .in_ready2(fifo_ready2_unused[3]),
    .in_ready(aw_in_ready),
    .out_data(aw_out_data), .out_valid(aw_out_valid), .out_ready(aw_pop)
);

reg                           w_in_valid;
reg  [DATA_W+KEEP_W:0]        w_in_data;
wire                          w_in_ready;
wire [DATA_W+KEEP_W:0]        w_out_data;
wire                          w_out_valid;
// W beats go once their burst's AW is valid, not only once it is taken
// (AXI4 A3.3.1: a master must not wait for AWREADY before asserting
// WVALID). w_credit counts the AWs taken less the bursts whose last W beat
// has gone, -1 (a burst's W beats all gone before its AW was taken) to
// 15: above 0, the W head is an AW's that was taken; at 0, it belongs to
// the AW at the head of its queue (AWs are queued with their burst's first
// W beat).
reg  [4:0]                    w_credit_reg = 5'd0;
wire                          w_ok = (!w_credit_reg[4] && w_credit_reg != 5'd0)
                                     || (w_credit_reg == 5'd0 && aw_out_valid);

reg                           w2_in_valid;
reg  [DATA_W+KEEP_W:0]        w2_in_data;
wire                          w_in_ready2;
wire                          w_out_last;   // a bus beat with WLAST taken
// Bit LG of a queued W beat's address (the wide port's half for a burst's
// first beat): a flush beat alone or behind the last data beat is at the
// next output beat's address, every other at d_waddr_reg (pad beats, never
// first in a burst, need none).
wire                          w_in_half;
wire                          w2_in_half;

assign m_axi_awid = 1'b0;
assign m_axi_awburst = 2'b01;                // INCR
assign m_axi_awcache = 4'b0011;
assign m_axi_awprot = 3'b010;
// The B responses the delivery waits for: the port's, or in the request
// stream's form (WR_REQ = 1) an OKAY for each burst once its last request
// has gone.
wire                          b_valid;
wire [1:0]                    b_resp;

generate
if (WR_REQ == 0) begin : axiport
    assign m_axi_awvalid = aw_out_valid;
    assign aw_pop = m_axi_awready;
    assign b_valid = m_axi_bvalid;
    assign b_resp = m_axi_bresp;
    assign m_wr_addr = {ADDR_W{1'b0}};
    assign m_wr_data = {AXI_W{1'b0}};
    assign m_wr_strb = {(AXI_W/8){1'b0}};
    assign m_wr_last = 1'b0;
    assign m_wr_valid = 1'b0;
    wire unused_wr = &{1'b0, m_wr_ready};
end
if (WR_REQ == 0 && AXI_W == DATA_W) begin : wport
    // One queued W beat a bus beat.
    wire w_go = w_out_valid && w_ok;
    wire unused_half = &{1'b0, w_in_half, w2_in_half};
    ddp_rx_fifo #(.WIDTH(DATA_W + KEEP_W + 1), .AW(2)) w_fifo (
        .clk(clk), .rst(rst),
        .in_data(w_in_data), .in_valid(w_in_valid), .in_ready(w_in_ready),
        .in_data2(w2_in_data), .in_valid2(w2_in_valid), .in_ready2(w_in_ready2),
        .out_data(w_out_data), .out_valid(w_out_valid), .out_ready(m_axi_wready && w_ok)
    );
    assign m_axi_awaddr = aw_out_data[ADDR_W+8-1:8];
    assign m_axi_awlen = aw_out_data[7:0];
    assign m_axi_awsize = LG[2:0];
    assign m_axi_wdata = w_out_data[DATA_W+KEEP_W:KEEP_W+1];
    assign m_axi_wstrb = w_out_data[KEEP_W:1];
    assign m_axi_wlast = w_out_data[0];
    assign m_axi_wvalid = w_go;
    assign w_out_last = w_go && m_axi_wready && m_axi_wlast;
end
if (WR_REQ == 0 && AXI_W != DATA_W) begin : wport2
    // A write port twice as wide: each bus beat carries two queued W beats
    // (an even one and the odd one after it, by address bit LG) or one, so
    // a payload that needs one W beat more than its ULPDU took in still
    // goes out at the input's rate. The W beats are queued as before, one
    // or two a clock, in ddp_rx_fifo2, whose two oldest are registers. A
    // burst of W beats at addr, len + 1 of them, is one of 2N-octet beats
    // at addr rounded down to 2N, ((addr / N) mod 2 + len) / 2 + 1 of them
    // (a BURST block of N-octet beats is half as many 2N-octet ones: the
    // bursts still never cross one, nor 4 KiB). Which half a burst's first
    // W beat takes is bit LG of its address, queued with it (w_in_half,
    // w2_in_half: bit LG of the beat's own address, which only a burst's
    // first beat needs); its later W beats start a bus beat at the even
    // half. The data and strobes are a pick between two registers.
    wire [DATA_W+KEEP_W+1:0]  w_h0x, w_h1;
    wire                      w_h1v;
    reg                       w_bfirst_reg = 1'b1;   // the next W beat starts its burst
    wire                      w_odd = w_bfirst_reg && w_h0x[0];       // it goes in the odd half
    wire                      w_two = !w_odd && !w_out_data[0];      // the one behind it with it
    wire                      w2_go = w_out_valid && (w_odd || w_out_data[0] || w_h1v) && w_ok;
    wire                      w2_take = w2_go && m_axi_wready;
    wire [8:0]                aw_len2 = {8'd0, aw_out_data[8 + LG]} + {1'b0, aw_out_data[7:0]};
    wire                      unused_w2 = &{1'b0, w_h1[0], aw_len2[0]};
    assign w_out_data = w_h0x[DATA_W+KEEP_W+1:1];
    ddp_rx_fifo2 #(.WIDTH(DATA_W + KEEP_W + 2), .AW(2)) w_fifo (
        .clk(clk), .rst(rst),
        .in_data({w_in_data, w_in_half}), .in_valid(w_in_valid), .in_ready(w_in_ready),
        .in_data2({w2_in_data, w2_in_half}), .in_valid2(w2_in_valid), .in_ready2(w_in_ready2),
        .out_data(w_h0x), .out_valid(w_out_valid), .out_ready(w2_take),
        .out_data2(w_h1), .out_valid2(w_h1v), .out_ready2(w_two)
    );
    always @(posedge clk) begin
        if (w2_take) begin
            w_bfirst_reg <= m_axi_wlast;
        end
        if (rst) begin
            w_bfirst_reg <= 1'b1;
        end
    end
    assign m_axi_awaddr = {aw_out_data[ADDR_W+8-1:8+LG+1], {(LG+1){1'b0}}};
    assign m_axi_awlen = aw_len2[8:1];
    assign m_axi_awsize = LG[2:0] + 3'd1;
    assign m_axi_wdata = w_odd ? {w_out_data[DATA_W+KEEP_W:KEEP_W+1], {DATA_W{1'b0}}}
                               : {w_two ? w_h1[DATA_W+KEEP_W+1:KEEP_W+2] : {DATA_W{1'b0}},
                                  w_out_data[DATA_W+KEEP_W:KEEP_W+1]};
    assign m_axi_wstrb = w_odd ? {w_out_data[KEEP_W:1], {KEEP_W{1'b0}}}
                               : {w_two ? w_h1[KEEP_W+1:2] : {KEEP_W{1'b0}}, w_out_data[KEEP_W:1]};
    assign m_axi_wlast = w_two ? w_h1[1] : w_out_data[0];
    assign m_axi_wvalid = w2_go;
    assign w_out_last = w2_take && m_axi_wlast;
end
if (WR_REQ != 0) begin : reqport
    // The write-request stream (m_wr_*): each request writes two N-octet
    // lines from a line address, m_wr_addr (a multiple of N; low lane
    // first: octet j of m_wr_data goes to m_wr_addr + j where its strobe
    // is set), so a burst's W beats go out two a clock whatever their
    // address's alignment, and a payload that spills from one line into
    // the next (a short one at most two lines) is one request. The queued
    // W beats are taken as the wide AXI port takes them, from ddp_rx_fifo2
    // (its two oldest are registers): the oldest and, unless it ends its
    // burst, the one behind it, which a request waits for but at a burst's
    // first beat (so the first write goes with the first W beat, as on the
    // AXI4 ports, and a long payload goes two lines a request). The line of a
    // burst's k-th W beat is its AW's line + k (bursts never cross a
    // BURST block, so only the low BW bits add); the AW stays at its
    // queue's head until the burst's last request, m_wr_last, has gone.
    // Requests may carry no strobes at all (a burst's pad beats, where a
    // piece ended inside it). Writes are posted: the delivery waits for a
    // burst's last request to have gone, in place of its B response, and
    // the AXI4 port is idle (its valids low).
    // A ULPDU's flush beat that would be a burst of one at the next BURST
    // block (d_t_w2b) is queued in the same clock as the beat before it
    // (in_data2) and without an AW, as a continuation (its queue bit, in
    // place of the AXI port's half, is 1: a beat queued in in_data2 behind
    // a beat that ends its burst; d_t_w2's flush beat is in the burst of
    // the beat before it, which does not end there): when it is behind its burst's
    // last beat at the head, it goes in that beat's request, one line up
    // (so a short payload that crosses a block is one request too); when
    // that beat went as a request's second line, it goes alone at the
    // first line of the next block, r_nb_reg, kept from that request.
    wire [DATA_W+KEEP_W+1:0]  w_h0x, w_h1;
    wire                      w_h1v;
    localparam [BW:0]         K1 = 1, K2 = 2;
    localparam [BQ_AW+1:0]    B1 = 1, B0 = 0;
    reg  [BW-1:0]             r_k_reg = {BW{1'b0}};    // W beats of the head burst gone
    reg  [BQ_AW+1:0]          r_b_reg = B0;            // bursts gone whose B is not yet taken
    reg  [ADDR_W-LG-BW-1:0]   r_nb_reg = {(ADDR_W-LG-BW){1'b0}};   // the block after the head AW's
    wire [ADDR_W-LG-BW-1:0]   r_nb;
    wire                      r_h0last = w_out_data[0];   // the oldest ends its burst
    wire                      r_h0cont = w_h0x[0];       // the oldest is a continuation, alone
    // A request offered as one line and not taken stays one line until it
    // is (r_one_reg): the beat behind it may arrive meanwhile, and a
    // valid/ready request's payload must not change while it waits.
    reg                       r_one_reg = 1'b0;
    wire                      r_two = w_h1v && !r_one_reg && (!r_h0last || w_h1[0]);   // the one behind it goes too
    wire                      r_go = w_out_valid && (aw_out_valid || r_h0cont)
                                     && (r_h0last || w_h1v || r_k_reg == {BW{1'b0}});
    wire                      r_take = r_go && m_wr_ready;
    wire                      r_last = r_two ? w_h1[1] : r_h0last;
    wire                      r_burst = r_take && r_last && !r_h0cont;   // a burst's last request
    wire [BW-1:0]             r_line = aw_out_data[8+LG +: BW] + r_k_reg;
    wire [BW:0]               r_k_sum = {1'b0, r_k_reg} + (r_two ? K2 : K1);
    rnic_incdec #(.W(ADDR_W-LG-BW), .DEC(0)) u_r_nb (.x(aw_out_data[ADDR_W+8-1:8+LG+BW]), .y(r_nb));
    wire                      unused_r = &{1'b0, aw_out_data[7:0], aw_out_data[LG+7:8],
                                           r_k_sum[BW], w_ok, w_in_half, w2_in_half, m_axi_awready,
                                           m_axi_wready, m_axi_bvalid, m_axi_bresp};
    assign w_out_data = w_h0x[DATA_W+KEEP_W+1:1];
    ddp_rx_fifo2 #(.WIDTH(DATA_W + KEEP_W + 2), .AW(2)) w_fifo (
        .clk(clk), .rst(rst),
        .in_data({w_in_data, 1'b0}), .in_valid(w_in_valid), .in_ready(w_in_ready),
        .in_data2({w2_in_data, w_in_data[0]}), .in_valid2(w2_in_valid), .in_ready2(w_in_ready2),
        .out_data(w_h0x), .out_valid(w_out_valid), .out_ready(r_take),
        .out_data2(w_h1), .out_valid2(w_h1v), .out_ready2(r_two)
    );
    always @(posedge clk) begin
        if (r_take) begin
            r_k_reg <= r_last ? {BW{1'b0}} : r_k_sum[BW-1:0];
        end
        if (r_burst) begin
            r_nb_reg <= r_nb;
        end
        r_b_reg <= r_b_reg + (r_burst ? B1 : B0) - (b_go ? B1 : B0);
        r_one_reg <= r_go && !m_wr_ready && !r_two;
        if (rst) begin
            r_k_reg <= {BW{1'b0}};
            r_b_reg <= B0;
            r_one_reg <= 1'b0;
        end
    end
    assign m_wr_addr = r_h0cont ? {r_nb_reg, {(BW+LG){1'b0}}} : {aw_out_data[ADDR_W+8-1:8+LG+BW], r_line, {LG{1'b0}}};
    assign m_wr_data = {r_two ? w_h1[DATA_W+KEEP_W+1:KEEP_W+2] : {DATA_W{1'b0}}, w_out_data[DATA_W+KEEP_W:KEEP_W+1]};
    assign m_wr_strb = {r_two ? w_h1[KEEP_W+1:2] : {KEEP_W{1'b0}}, w_out_data[KEEP_W:1]};
    assign m_wr_last = r_last;
    assign m_wr_valid = r_go;
    assign aw_pop = r_burst;
    assign b_valid = r_b_reg != B0;
    assign b_resp = 2'b00;
    assign w_out_last = 1'b0;
    assign m_axi_awvalid = 1'b0;
    assign m_axi_awaddr = {ADDR_W{1'b0}};
    assign m_axi_awlen = 8'd0;
    assign m_axi_awsize = 3'd0;
    assign m_axi_wdata = {AXI_W{1'b0}};
    assign m_axi_wstrb = {(AXI_W/8){1'b0}};
    assign m_axi_wlast = 1'b0;
    assign m_axi_wvalid = 1'b0;
end
endgenerate

always @(posedge clk) begin
    w_credit_reg <= w_credit_reg + ((m_axi_awvalid && m_axi_awready) ? 5'd1 : 5'd0)
        - (w_out_last ? 5'd1 : 5'd0);
    if (rst) begin
        w_credit_reg <= 5'd0;
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
    .in_data(rf_in_data), .in_valid(rf_in_valid), .in_data2(rf_in_data), .in_valid2(1'b0), .in_ready2(fifo_ready2_unused[4]),
    .in_ready(rf_in_ready),
    .out_data(rf_out_data), .out_valid(rf_out_valid), .out_ready(rf_out_ready)
);

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
reg  [MK_W-1:0]      b_cnt1_reg = 1;       // b_cnt_reg + 1
reg  [CONN_W-1:0]    d_conn_reg;

ddp_rx_fifo #(.WIDTH(CONN_W), .AW(BQ_AW)) bq_fifo (
    .clk(clk), .rst(rst),
    .in_data(d_conn_reg), .in_valid(aw_in_valid), .in_data2(d_conn_reg), .in_valid2(1'b0), .in_ready2(fifo_ready2_unused[5]),
    .in_ready(bq_in_ready),
    .out_data(bq_out_data), .out_valid(bq_out_valid), .out_ready(b_go)
);

always @(posedge clk) begin
    if (aw_in_valid && aw_in_ready) begin
        aw_cnt_reg <= aw_cnt_reg + 1'b1;
    end
    if (b_go) begin
        b_cnt_reg <= b_cnt1_reg;
        b_cnt1_reg <= b_cnt1_reg + 1'b1;
    end
    if (rst) begin
        aw_cnt_reg <= 0;
        b_cnt_reg <= 0;
        b_cnt1_reg <= 1;
    end
end

// --- placement: D0 (set-up), D1 (one input beat a clock), D2 (piece end) ----

// A descriptor's fields.
localparam DCO_REC = SU_W;
wire                   g_early = dc_out[DC_W-1];
wire [CONN_W-1:0]      g_conn = dc_out[DC_W-2 -: CONN_W];
wire                   g_first = dc_out[DC_W-CONN_W-2];
wire                   g_en = dc_out[DC_W-CONN_W-3];
wire                   g_dplace = dc_out[DC_W-CONN_W-4];
wire [ADDR_W-1:0]      g_ddest = dc_out[DCO_REC + RECC_W + 21 +: ADDR_W];
wire [4:0]             g_ds = dc_out[DCO_REC + RECC_W + 16 +: 5];
wire [15:0]            g_dremain = dc_out[DCO_REC + RECC_W +: 16];
wire [RECC_W-1:0]      g_drec = dc_out[DCO_REC +: RECC_W];
wire [SU_W-1:0]        g_dsu = dc_out[SU_W-1:0];

// A later piece waits for placement to be empty, then reads where its
// ULPDU's last piece ended (g_fetch, one clock) and works out its set-up
// from that (g_fetch2, one clock).
reg                    g_fetch_reg = 1'b0;
reg                    g_fetch2_reg = 1'b0;
reg [CONN_W-1:0]       g_fconn_reg;
reg                    g_fen_reg;
reg                    gx_place_reg;
reg                    gx_hlk_reg;       // herr_reg[g_fconn_reg] at the fetch
wire                   gx_hlk;
rnic_pick #(.AW(CONN_W)) u_gx_hlk (.v(herr_reg), .a(g_fconn_reg), .y(gx_hlk));
reg [ADDR_W-1:0]       gx_dest_reg;
reg [15:0]             gx_remain_reg;
reg [RECC_W-1:0]       gx_rec_reg;
reg [223:0]            gx_rr_reg;
reg [SU_W-1:0]         gx_su_reg;

reg                    d0_valid_reg = 1'b0;
reg                    d1_active_reg = 1'b0;
reg                    d2_valid_reg = 1'b0;
reg                    d3_valid_reg = 1'b0;   // D3, after D2: see there
reg                    d4_valid_reg = 1'b0;   // D4, after D3
wire                   d0_take;              // D1 takes D0 this clock
wire                   d2_free;              // D2 can take a piece end this clock
wire                   pl_empty = !d0_valid_reg && !d1_active_reg && !d2_valid_reg && !d3_valid_reg && !d4_valid_reg
                                  && !g_fetch_reg && !g_fetch2_reg;

reg                    g_load;               // D0 loads this clock
reg                    g_pfirst, g_pen, g_place, g_pearly;
reg [CONN_W-1:0]       g_pconn;
reg [ADDR_W-1:0]       g_dest;
reg [4:0]              g_s;
reg [15:0]             g_remain;
reg [RECC_W-1:0]       g_rec;
reg [223:0]            g_rr;
reg [SU_W-1:0]         g_su;

// (d0_take = d0_valid && (!d1_active || d_end_w), spelled out so that
// d_end_w, the deepest of the terms, comes in last.)
wire                   d_end_w;     // the piece ends this clock (to D2)
wire                   dc_rdy_a = dc_out_valid && !g_fetch_reg && !g_fetch2_reg
                                  && (g_first ? (!d0_valid_reg || !d1_active_reg) : pl_empty);
wire                   dc_rdy_b = dc_out_valid && !g_fetch_reg && !g_fetch2_reg && g_first;
assign dc_out_ready = dc_rdy_a || (dc_rdy_b && d_end_w);

always @* begin
    g_load = 1'b0;
    g_pconn = g_conn;
    g_pfirst = g_first;
    g_pearly = g_early;
    g_pen = g_en;
    g_place = g_dplace;
    g_dest = g_ddest;
    g_s = g_ds;
    g_remain = g_dremain;
    g_rec = g_drec;
    g_rr = 224'd0;
    g_su = g_dsu;
    dx_rd_en = 1'b0;
    dx_rd_addr = g_conn;
    if (g_fetch2_reg) begin
        // A later piece: carry on where the last piece ended (and stop if
        // a B error response of the stream comes in meanwhile).
        g_load = 1'b1;
        g_pconn = g_fconn_reg;
        g_pfirst = 1'b0;
        g_pearly = 1'b0;
        g_pen = g_fen_reg;
        g_place = gx_place_reg && !gx_hlk_reg && !(herr_set && herr_set_conn == g_fconn_reg);
        g_dest = gx_dest_reg;
        g_s = 5'd0;
        g_remain = gx_remain_reg;
        g_rec = gx_rec_reg;
        g_rr = gx_rr_reg;
        g_su = gx_su_reg;
    end else if (dc_out_ready && g_first) begin
        g_load = 1'b1;
    end else if (dc_out_ready) begin
        dx_rd_en = 1'b1;
    end
end

// D0: the piece's rotation R = (dest - S) mod N (output beat m holds the
// octets whose g = piece octet + R is in m*N .. m*N + N-1), its write
// window as lane masks of output beats 0 and 1 and the counts to the
// window's first and last beats, the first write address and the output
// beats to the end of the ULPDU's payload. The sums are pl_setup's, made
// ahead (C2 for a first piece, g_fetch for a later one); D0 turns them
// into masks and flags.
reg                    d0_first_reg, d0_en_reg, d0_place_reg, d0_early_reg;
reg [CONN_W-1:0]       d0_conn_reg;
reg [ADDR_W-1:0]       d0_dest_reg;
reg [4:0]              d0_s_reg;
reg [15:0]             d0_remain_reg;
reg [RECC_W-1:0]       d0_rec_reg;
reg [223:0]            d0_rr_reg;
reg [LG-1:0]           d0_r_reg;
reg [KEEP_W-1:0]       d0_win0_reg, d0_win1_reg, d0_lo_reg, d0_hi_reg;
reg                    d0_wz_reg;        // d0_win0_reg is empty (from the flags, not a 64-input OR)
reg                    d0_lhne_reg;      // |(d0_lo_reg & d0_hi_reg)
reg [19:0]             d0_q0_reg, d0_q1_reg;
reg [17:0]             d0_left_reg;
reg [ADDR_W-1:0]       d0_waddr_reg;
reg [BW-1:0]           d0_bofs_reg;
reg                    d0_wst_reg;
reg [LG-1:0]           g_r, g_ylo;
reg [2:0]              g_m0;
reg [BW+2:0]           g_bofs;
reg [17:0]             g_left;
reg [19:0]             g_q1, g_q0;
reg [KEEP_W-1:0]       g_lo, g_hi, g_win0, g_win1;
reg                    g_m0z, g_m0p, g_m0o, g_m0g, g_m1z, g_m1n, g_m1o, g_m1l;

// Lanes of output beat m that are in the window [m0*N + lo, m1*N + hi],
// from flags of q0 = m0 - m and q1 = m1 - m: q0 = 0, q0 > 0, q1 = 0,
// q1 < 0; lo_m = lanes >= lo, hi_m = lanes <= hi.
function [KEEP_W-1:0] win_flags(input q0z, input q0p, input q1z, input q1n, input [KEEP_W-1:0] lo_m,
                                input [KEEP_W-1:0] hi_m);
    begin
        if (q0p || q1n) begin
            win_flags = {KEEP_W{1'b0}};
        end else begin
            win_flags = (q0z ? lo_m : {KEEP_W{1'b1}}) & (q1z ? hi_m : {KEEP_W{1'b1}});
        end
    end
endfunction

// Whether win_mask(q0, q1, lo_m, hi_m) has a lane, from q0, q1 and
// lhne = |(lo_m & hi_m) (fixed for a piece: dest's lane <= ylo), not
// from a 64-input OR of the mask.
function win_ne(input [19:0] q0, input [19:0] q1, input lhne);
    win_ne = !(!q0[19] && q0 != 20'd0) && !q1[19] && (q0 != 20'd0 || q1 != 20'd0 || lhne);
endfunction

// The same from q0 and q1 themselves (20-bit two's complement).
function [KEEP_W-1:0] win_mask(input [19:0] q0, input [19:0] q1, input [KEEP_W-1:0] lo_m,
                               input [KEEP_W-1:0] hi_m);
    win_mask = win_flags(q0 == 20'd0, !q0[19] && q0 != 20'd0, q1 == 20'd0, q1[19], lo_m, hi_m);
endfunction

always @* begin : setup
    integer b;
    {g_r, g_m0, g_ylo, g_left, g_q1} = g_su;
    for (b = 0; b < KEEP_W; b = b + 1) begin
        g_lo[b] = b >= g_dest[LG-1:0];
        g_hi[b] = b <= g_ylo;
    end
    // Beats 0 and 1 against the window: m0 = 0, > 0, = 1, > 1; m1 = q1 + 2
    // = 0, < 0 (q1 = -3: no payload), = 1, < 1.
    g_m0z = g_m0 == 3'd0;
    g_m0p = g_m0 != 3'd0;
    g_m0o = g_m0 == 3'd1;
    g_m0g = g_m0 > 3'd1;
    g_m1z = g_q1 == 20'hffffe;
    g_m1n = g_q1 == 20'hffffd;
    g_m1o = g_q1 == 20'hfffff;
    g_m1l = g_m1z || g_m1n;
    g_win0 = win_flags(g_m0z, g_m0p, g_m1z, g_m1n, g_lo, g_hi);
    g_win1 = win_flags(g_m0o, g_m0g, g_m1o, g_m1l, g_lo, g_hi);
    g_q0 = {{17{1'b0}}, g_m0} - 20'd2;
    g_bofs = {3'd0, g_dest[LG +: BW]} - {{BW{1'b0}}, g_m0};
end

always @(posedge clk) begin
    if (g_fetch2_reg) begin
        g_fetch2_reg <= 1'b0;
    end
    if (g_fetch_reg) begin
        g_fetch_reg <= 1'b0;
        g_fetch2_reg <= 1'b1;
        {gx_place_reg, gx_dest_reg, gx_remain_reg, gx_rec_reg, gx_rr_reg} <= dx_rd_data;
        gx_place_reg <= dx_rd_data[DX_W-1] && g_fen_reg && !(herr_set && herr_set_conn == g_fconn_reg);
        gx_hlk_reg <= gx_hlk;         // (a register's input alone: see V0)
        gx_su_reg <= pl_setup(dx_rd_data[DX_W-1-ADDR_W +: LG], 5'd0, dx_rd_data[DX_W-1-ADDR_W-16 +: 16]);
    end else if (dc_out_ready && !g_first) begin
        g_fetch_reg <= 1'b1;
        g_fconn_reg <= g_conn;
        g_fen_reg <= g_en;
    end
    if (g_load) begin
        d0_valid_reg <= 1'b1;
        d0_first_reg <= g_pfirst;
        d0_early_reg <= g_pearly;
        d0_en_reg <= g_pen;
        d0_place_reg <= g_place;
        d0_conn_reg <= g_pconn;
        d0_dest_reg <= g_dest;
        d0_s_reg <= g_s;
        d0_remain_reg <= g_remain;
        d0_rec_reg <= g_rec;
        d0_rr_reg <= g_rr;
        d0_r_reg <= g_r;
        d0_win0_reg <= g_win0;
        d0_win1_reg <= g_win1;
        // win0 is empty when beat 0 is outside the window, or when the
        // window starts and ends in it and its ends cross (lo_m, the lanes
        // >= dest's, and hi_m, <= ylo, are never empty alone).
        d0_wz_reg <= g_m0p || g_m1n || (g_m0z && g_m1z && g_dest[LG-1:0] > g_ylo);
        d0_lhne_reg <= g_dest[LG-1:0] <= g_ylo;
        d0_q0_reg <= g_q0;
        d0_q1_reg <= g_q1;
        d0_lo_reg <= g_lo;
        d0_hi_reg <= g_hi;
        // The first written output beat, m0, is at dest rounded down to
        // N; output beat k at (dest / N - m0 + k) N. D1 counts the address
        // from m0 on (wst), and its place in the burst block from 0.
        d0_waddr_reg <= g_dest & {{(ADDR_W-LG){1'b1}}, {LG{1'b0}}};
        d0_bofs_reg <= g_bofs[BW-1:0];
        d0_wst_reg <= g_m0 == 3'd0;
        d0_left_reg <= g_left;
    end else if (d0_take) begin
        d0_valid_reg <= 1'b0;
    end
    if (rst) begin
        g_fetch_reg <= 1'b0;
        g_fetch2_reg <= 1'b0;
        d0_valid_reg <= 1'b0;
    end
end

// D1: the piece being placed. Its control comes from registers only: the
// window masks of the current and the next output beat (advanced a beat
// at a time by the counts q0, q1 to the window's ends), flags of the
// counts of output beats left (left) and of beats left in the open burst
// (bleft), and the block offset of the output beat (bofs).
reg [1:0]              d_state_reg = D_DATA;
reg                    d_first_reg, d_en_reg, d_place_reg, d_last_reg, d_early_reg;
reg [ADDR_W-1:0]       d_dest_reg;
reg [4:0]              d_s_reg;
reg [15:0]             d_remain_reg;
reg [RECC_W-1:0]       d_rec_reg;
reg [223:0]            d_rr_reg;
reg [LG-1:0]           d_r_reg;
reg [KEEP_W-1:0]       d_win_reg, d_winn_reg, d_lo_reg, d_hi_reg;
reg                    d_wne_reg, d_wnen_reg;    // the masks are not empty
reg                    d_lhne_reg;               // |(d_lo_reg & d_hi_reg)
reg [19:0]             d_q0_reg, d_q1_reg;       // window ends minus (output beat + 2)
reg [ADDR_W-1:0]       d_waddr_reg;
reg [ADDR_W-LG-1:0]    d_wan_reg;        // d_waddr_reg / N + 1, kept beside it
reg                    d_wst_reg;       // the output beat is the window's first (m0) or later
reg [BW-1:0]           d_bofs_reg;      // output beat's place in its BURST block
reg [17:0]             d_left_reg;       // output beats to the end of the ULPDU's payload
reg [BW-1:0]           d_bleft_reg = {BW{1'b0}};   // beats left in the open burst (< BURST)
reg [12:0]             d_k_reg;          // input beat index (a piece of 65535 octets: 8192 at W=64)
reg [DATA_W-1:0]       d_prev_reg;
reg [KEEP_W-1:0]       d_prevk_reg;
reg [16:0]             d_octs_reg;       // octets of the piece

wire [DATA_W-1:0]      d_cur_data = df_out[DF_W-1 -: DATA_W];
wire [KEEP_W-1:0]      d_cur_keep = df_out[2 +: KEEP_W];
wire                   d_cur_tlast = df_out[1];
wire                   d_cur_ulast = df_out[0];
wire                   out_ok = aw_in_ready && w_in_ready && bq_in_ready;

// Output beat: lanes at or above the rotation from the current beat,
// below it from the previous one, each rotated up by R lanes.
reg [2*DATA_W-1:0]     rot_d_cur, rot_d_prev;
reg [2*KEEP_W-1:0]     rot_k_cur, rot_k_prev;
reg [KEEP_W-1:0]       hi_lanes;
reg [DATA_W-1:0]       fl_data;
reg [KEEP_W-1:0]       fl_strb;

// The W beat (w_in_data): the output beat, a ULPDU's flush beat alone
// (wb_fl, d_t_fl's case) or a pad beat. Which lanes come from the current
// beat (uc) and the previous one (up), and which of them write (sc, sp),
// are worked out per lane from registers, so that a data bit is one LUT
// behind the rotations (hw/README.md, "LUT levels").
wire                   wb_data_st = d_state_reg == D_DATA;
wire                   wb_pad = d_state_reg != D_DATA && d_state_reg != D_FLUSH;
wire                   wb_fl = wb_data_st && d_cur_tlast && d_cur_ulast && d_place_reg && !d_wne_reg
                               && !f_left0 && f_bl0 && f_left1;
reg [KEEP_W-1:0]       uc_lanes, up_lanes, sc_lanes, sp_lanes;
reg [DATA_W-1:0]       wb_data;
reg [KEEP_W-1:0]       wb_strb;

always @* begin
    rot_d_cur = {d_cur_data, d_cur_data} << (8 * d_r_reg);
    rot_k_cur = {d_cur_keep, d_cur_keep} << d_r_reg;
    rot_d_prev = {d_prev_reg, d_prev_reg} << (8 * d_r_reg);
    rot_k_prev = {d_prevk_reg, d_prevk_reg} << d_r_reg;
    hi_lanes = lane_window({1'b0, d_r_reg}, KEEP_WI[LG:0]);
    // The flush beat of the current input beat (the next output beat: its
    // lanes below the rotation), for a piece's tlast beat.
    fl_data = rot_d_cur[2*DATA_W-1:DATA_W] & expand(~hi_lanes);
    fl_strb = rot_k_cur[2*KEEP_W-1:KEEP_W] & ~hi_lanes & d_winn_reg & {KEEP_W{d_place_reg}};
    // The W beat, as lanes: the output beat takes the current beat's lanes
    // at or above the rotation (none in a flush beat: it has no current
    // input beat) and the previous one's below it; a flush beat alone the
    // current beat's below it; a pad beat none.
    uc_lanes = wb_pad ? {KEEP_W{1'b0}} : wb_fl ? ~hi_lanes : wb_data_st ? hi_lanes : {KEEP_W{1'b0}};
    up_lanes = (wb_pad || wb_fl) ? {KEEP_W{1'b0}} : ~hi_lanes;
    sc_lanes = uc_lanes & (wb_fl ? d_winn_reg : d_win_reg) & {KEEP_W{d_place_reg}};
    sp_lanes = up_lanes & d_win_reg & {KEEP_W{d_place_reg}};
    wb_data = (rot_d_cur[2*DATA_W-1:DATA_W] & expand(uc_lanes)) | (rot_d_prev[2*DATA_W-1:DATA_W] & expand(up_lanes));
    wb_strb = (rot_k_cur[2*KEEP_W-1:KEEP_W] & sc_lanes) | (rot_k_prev[2*KEEP_W-1:KEEP_W] & sp_lanes);
end

// Octets 18..45 of a first piece from its input beat k.
function [223:0] rr_capture(input [223:0] rr, input [DATA_W-1:0] beat, input [12:0] k);
    integer j;
    begin
        rr_capture = rr;
        for (j = 0; j < 28; j = j + 1) begin
            // (k counts the beats queued: at W=64 beat 0, all header, was not.)
            if ({19'd0, k} == (18 + j) / KEEP_W - DROP0) begin
                rr_capture[8*j +: 8] = beat[8*((18 + j) % KEEP_W) +: 8];
            end
        end
    end
endfunction

// Flags of the counts, from registers. A new burst (at an output beat
// with no burst open) runs to the end of its BURST block or to the end of
// the ULPDU's payload: nbm1 = min(left - 1, BURST - 1 - bofs) beats after
// its first.
// (left - 1 >= BURST - 1 - bofs, the wrapped left - 1 of left = 0
// included, is worked out on left's low BW + 1 bits: any higher bit set
// makes left >= 2 BURST. No carry chain: the flags are a LUT level or two
// from the registers.)
// left = 0, 1, 2 and bleft = 0, 1, 2 are registers of their own, kept
// with the counts.
reg                    f_left0 = 1'b1, f_left1 = 1'b0, f_left2 = 1'b0;
reg                    f_bl0 = 1'b1, f_bl1 = 1'b0, f_bl2 = 1'b0;
wire                   f_left3 = d_left_reg == 18'd3;
wire                   f_left4 = d_left_reg == 18'd4;
wire                   f_bl3 = d_bleft_reg == 3;
wire [BW-1:0]          f_nb = ~d_bofs_reg;                    // BURST - 1 - bofs
wire                   f_bend = d_bofs_reg == {BW{1'b1}};     // last beat of a block
wire                   f_bend1 = d_bofs_reg == {{(BW-1){1'b1}}, 1'b0};
wire [BW:0]            f_llo = d_left_reg[BW:0];
wire [BW:0]            f_llom1 = f_llo - 1'b1;
wire                   f_lge = d_left_reg[17:BW+1] != 0 || f_llo == 0 || f_llom1 >= {1'b0, f_nb};
wire [7:0]             f_nbm1 = f_lge ? {{(8-BW){1'b0}}, f_nb} : {{(8-BW){1'b0}}, f_llom1[BW-1:0]};
wire                   f_nbm1_0 = f_left1 || f_bend;
wire                   f_nbm1_1 = (f_left2 && !f_bend) || (f_bend1 && !f_left0 && !f_left1);
wire                   f_nbm1_2 = f_nbm1 == 8'd2;

// The counters' steps, from their registers alone (rnic_incdec:
// no carry chain), so that the control only picks them.
wire [17:0]            d_leftm1;
wire [16:0]            d_leftm2h;
wire [17:0]            d_leftm2 = {d_leftm2h, d_left_reg[0]};
wire [12:0]            d_k1;
wire [19:0]            d_q0m1, d_q1m1;
wire [ADDR_W-LG-1:0]   d_wan1;
rnic_incdec #(.W(18), .DEC(1)) u_leftm1 (.x(d_left_reg), .y(d_leftm1));
rnic_incdec #(.W(17), .DEC(1)) u_leftm2 (.x(d_left_reg[17:1]), .y(d_leftm2h));
rnic_incdec #(.W(13), .DEC(0)) u_k1 (.x(d_k_reg), .y(d_k1));
rnic_incdec #(.W(20), .DEC(1)) u_q0m1 (.x(d_q0_reg), .y(d_q0m1));
rnic_incdec #(.W(20), .DEC(1)) u_q1m1 (.x(d_q1_reg), .y(d_q1m1));
rnic_incdec #(.W(ADDR_W-LG), .DEC(0)) u_wan1 (.x(d_wan_reg), .y(d_wan1));
// The next output beat's address: waddr + N from the window's first beat
// on (d_wst), before it the first beat's address.
// (d_wan_reg is waddr / N + 1, stepped beside waddr by its own increment.)
wire [ADDR_W-1:0]      d_waddr_n = d_wst_reg ? {d_wan_reg, {LG{1'b0}}} : d_waddr_reg;
wire [ADDR_W-LG-1:0]   d_wan_n = d_wst_reg ? d_wan1 : d_wan_reg;

reg                    d_beat;      // an input beat taken
reg                    d_wr;        // a W beat of the payload's window (and maybe an AW) queued
reg                    d_aw;
reg                    d_go;
reg [1:0]              d_state_next;
reg [223:0]            d_rr_next;
reg [16:0]             d_octs;
reg [LG:0]             d_kc;

assign d0_take = d0_valid_reg && (!d1_active_reg || d_end_w);
// A piece that D1 takes while idle whose first input beat writes nothing
// (its output beat is outside the write window: the payload's first
// output beat needs the next input beat too) takes that beat at the load
// (d_prime): D1 starts as it would be a clock later, after a beat that
// only fills d_prev. Not for a tlast beat, nor behind a piece still in D1
// (its beat at df_out would be that piece's).
wire                   d_prime = d0_valid_reg && !d1_active_reg && df_out_valid && !d_cur_tlast
                                 && d0_wz_reg;
assign df_out_ready = d_beat || d_prime;
// D1's step over that beat, from D0's registers.
wire [19:0]            d0_q0m1, d0_q1m1;
wire [ADDR_W-LG-1:0]   d0_wan;
wire [ADDR_W-LG-2:0]   d0_wan2h;         // (waddr / N + 2) / 2: + 2 is + 1 above bit 0
rnic_incdec #(.W(20), .DEC(1)) u_d0_q0m1 (.x(d0_q0_reg), .y(d0_q0m1));
rnic_incdec #(.W(20), .DEC(1)) u_d0_q1m1 (.x(d0_q1_reg), .y(d0_q1m1));
rnic_incdec #(.W(ADDR_W-LG), .DEC(0)) u_d0_wan (.x(d0_waddr_reg[ADDR_W-1:LG]), .y(d0_wan));
rnic_incdec #(.W(ADDR_W-LG-1), .DEC(0)) u_d0_wan2 (.x(d0_waddr_reg[ADDR_W-1:LG+1]), .y(d0_wan2h));
wire [KEEP_W-1:0]      d0_win2 = win_mask(d0_q0_reg, d0_q1_reg, d0_lo_reg, d0_hi_reg);

// What a data or flush beat would do, from registers alone (the handshakes
// only AND it in): it writes (wrx; a pad beat never does), and then left
// is 0 (lft_n0x), bleft is 0 or 1 (bl_n0x, bl_n1x). A ULPDU's last input
// beat, when taken, ends the piece with nothing more to write (t_end1),
// with a flush beat behind its own in the same clock (t_w2 in the same
// burst; t_w2b as a burst of one behind this beat's, which ends its burst
// at a BURST block's end), or with a flush beat alone (t_fl); otherwise a
// flush beat follows. They are nets of their own, worked out beside the
// handshakes.
wire                   d_wrx = d_place_reg && d_wne_reg;
wire                   d_lft_n0x = d_wrx ? f_left1 : f_left0;
wire                   d_bl_n0x = d_wrx ? (f_bl0 ? f_nbm1_0 : f_bl1) : f_bl0;
wire                   d_bl_n1x = d_wrx ? (f_bl0 ? f_nbm1_1 : f_bl2) : f_bl1;
wire                   d_t_end1;
wire                   d_t_w2;
wire                   d_t_w2b;
wire                   d_t_fl;
assign d_t_end1 = d_cur_ulast && (!d_place_reg || d_lft_n0x);
assign d_t_w2 = d_cur_ulast && !d_t_end1 && d_wrx && w_in_ready2 && d_bl_n1x;
assign d_t_w2b = d_cur_ulast && !d_t_end1 && d_wrx && w_in_ready2 && (f_bl1 || (WR_REQ != 0 && f_bl0 && f_bend));
assign d_t_fl = d_cur_ulast && !d_t_end1 && !d_wrx && f_bl0 && f_left1;

// The piece ends this clock (d_end_w): a ULPDU's last input beat taken
// that leaves no flush beat or queues it now (d_t_end1, d_t_w2, d_t_w2b, d_t_fl,
// below), a piece's flush beat that ends its burst, or its last pad beat.
// One AND of the handshakes and what the state would do, from registers:
// d0_take and the descriptor queue's ready hang on it.
wire                   d_endx = (d_state_reg == D_DATA) ? (df_out_valid && d_cur_tlast && (d_t_end1 || d_t_w2 || d_t_w2b || d_t_fl))
                              : (d_state_reg == D_FLUSH) ? d_bl_n0x : f_bl1;
assign d_end_w = d1_active_reg && out_ok && d2_free && d_endx;

always @* begin
    d_beat = 1'b0;
    d_wr = 1'b0;
    d_aw = 1'b0;
    d_go = 1'b0;
    d_state_next = d_state_reg;
    d_octs = d_octs_reg;
    d_kc = {(LG+1){1'b0}};
    d_rr_next = d_rr_reg;
    aw_in_valid = 1'b0;
    aw_in_data = {d_waddr_reg, f_nbm1};
    w_in_valid = 1'b0;
    w_in_data = {wb_data, wb_strb, wb_pad ? f_bl1 : wb_fl ? 1'b1 : f_bl0 ? f_nbm1_0 : f_bl1};
    w2_in_valid = 1'b0;
    w2_in_data = {fl_data, fl_strb, 1'b1};
    // A piece's end waits for D2 (d2_free): the tlast beat, a flush beat
    // and the last pad beat.
    case (d_state_reg)
        D_DATA: d_go = d1_active_reg && out_ok && df_out_valid && (!d_cur_tlast || d2_free);
        D_FLUSH: d_go = d1_active_reg && out_ok && d2_free;
        default: d_go = d1_active_reg && out_ok && (!f_bl1 || d2_free);
    endcase
    d_beat = d_go && d_state_reg == D_DATA;
    d_wr = d_go && d_state_reg != D_PAD && d_wrx;
    d_aw = d_wr && f_bl0;
    if (d_wr) begin
        w_in_valid = 1'b1;
        aw_in_valid = d_aw;
    end
    if (d_beat && d_first_reg) begin
        d_rr_next = rr_capture(d_rr_reg, d_cur_data, d_k_reg);
    end
    if (d_beat && d_cur_tlast) begin
        // k N + the beat's octets, N of them or fewer (no carry chain)
        d_kc = keep_count(d_cur_keep);
        d_octs = d_kc[LG] ? ({4'd0, d_k1} << LG) : (({4'd0, d_k_reg} << LG) | {{(17-LG){1'b0}}, d_kc[LG-1:0]});
    end
    case (d_state_reg)
    D_DATA: begin
        if (d_beat && d_cur_tlast) begin
            // A flush beat follows when the last input beat leaves
            // octets of the payload for the next output beat: always for a
            // piece that does not end its ULPDU, otherwise when output
            // beats of the payload are left. For a ULPDU's last piece it
            // goes into the W queue in this clock, behind this beat's,
            // when it ends the burst this beat's is in, or as a burst of
            // one of its own when this beat's burst ends before it (at a
            // BURST block's end); or alone, as a burst of one, when this
            // beat writes nothing.
            if (d_t_w2) begin
                w2_in_valid = 1'b1;
            end else if (d_t_w2b) begin
                // (With the write-request stream it goes as a continuation
                // of this beat, without an AW (reqport), also when this
                // beat is a burst of one at a block's end.)
                w2_in_valid = 1'b1;
                if (WR_REQ == 0) begin
                    aw_in_valid = 1'b1;
                    aw_in_data = {d_waddr_n, 8'd0};
                end
            end else if (d_t_fl) begin
                w_in_valid = 1'b1;            // (w_in_data: the flush beat)
                aw_in_valid = 1'b1;
                aw_in_data = {d_waddr_n, 8'd0};
            end else if (!d_t_end1) begin
                d_state_next = D_FLUSH;
            end
        end
    end
    D_FLUSH: begin
        if (d_go && !d_bl_n0x) begin
            d_state_next = D_PAD;
        end
    end
    default: begin
        // The piece ended inside a burst: the rest of it, no strobes.
        if (d_go) begin
            w_in_valid = 1'b1;                // (w_in_data: a pad beat)
        end
    end
    endcase
    if (d_end_w) begin
        d_state_next = D_DATA;
    end
end

assign w_in_half = wb_fl ? d_waddr_n[LG] : d_waddr_reg[LG];
assign w2_in_half = d_waddr_n[LG];

// Output beats (W beats pushed, from the data path: not the pad beats).
wire [1:0]             d_nw = {1'b0, d_wr} + {1'b0, w2_in_valid}
                             + {1'b0, !d_wr && w_in_valid && d_state_reg == D_DATA};

always @(posedge clk) begin
    if (d0_take) begin
        d1_active_reg <= 1'b1;
        d_state_reg <= D_DATA;
        d_conn_reg <= d0_conn_reg;
        d_first_reg <= d0_first_reg;
        d_early_reg <= d0_early_reg;
        d_en_reg <= d0_en_reg;
        d_place_reg <= d0_place_reg;
        d_dest_reg <= d0_dest_reg;
        d_s_reg <= d0_s_reg;
        d_remain_reg <= d0_remain_reg;
        d_rec_reg <= d0_rec_reg;
        d_r_reg <= d0_r_reg;
        d_lo_reg <= d0_lo_reg;
        d_hi_reg <= d0_hi_reg;
        d_lhne_reg <= d0_lhne_reg;
        if (d_prime) begin
            // (as a D1 beat that writes nothing: see there)
            d_rr_reg <= d0_first_reg ? rr_capture(d0_rr_reg, d_cur_data, 13'd0) : d0_rr_reg;
            d_win_reg <= d0_win1_reg;
            d_winn_reg <= d0_win2;
            d_wne_reg <= |d0_win1_reg;
            d_wnen_reg <= win_ne(d0_q0_reg, d0_q1_reg, d0_lhne_reg);
            d_q0_reg <= d0_q0m1;
            d_q1_reg <= d0_q1m1;
            d_waddr_reg <= d0_wst_reg ? {d0_wan, {LG{1'b0}}} : d0_waddr_reg;
            d_wan_reg <= d0_wst_reg ? {d0_wan2h, d0_waddr_reg[LG]} : d0_wan;
            d_bofs_reg <= d0_bofs_reg + 1'b1;
            d_wst_reg <= d0_q0_reg[19];
        end else begin
            d_rr_reg <= d0_rr_reg;
            d_win_reg <= d0_win0_reg;
            d_winn_reg <= d0_win1_reg;
            d_wne_reg <= |d0_win0_reg;
            d_wnen_reg <= |d0_win1_reg;
            d_q0_reg <= d0_q0_reg;
            d_q1_reg <= d0_q1_reg;
            d_waddr_reg <= d0_waddr_reg;
            d_wan_reg <= d0_wan;
            d_bofs_reg <= d0_bofs_reg;
            d_wst_reg <= d0_wst_reg;
        end
        d_left_reg <= d0_left_reg;
        f_left0 <= d0_left_reg == 18'd0;
        f_left1 <= d0_left_reg == 18'd1;
        f_left2 <= d0_left_reg == 18'd2;
        d_bleft_reg <= {BW{1'b0}};
        {f_bl0, f_bl1, f_bl2} <= 3'b100;
        d_k_reg <= d_prime ? 13'd1 : 13'd0;
        d_prev_reg <= d_prime ? d_cur_data : {DATA_W{1'b0}};
        d_prevk_reg <= d_prime ? d_cur_keep : {KEEP_W{1'b0}};
    end else begin
        if (d_end_w) begin
            d1_active_reg <= 1'b0;
        end
        d_state_reg <= d_state_next;
        d_rr_reg <= d_rr_next;
        if (d_go) begin
            if (d_state_reg == D_PAD || (d_wr && !d_aw)) begin
                d_bleft_reg <= d_bleft_reg - 1'b1;
                {f_bl0, f_bl1, f_bl2} <= {f_bl1, f_bl2, f_bl3};
            end else if (d_wr) begin
                d_bleft_reg <= f_nbm1[BW-1:0];
                {f_bl0, f_bl1, f_bl2} <= {f_nbm1_0, f_nbm1_1, f_nbm1_2};
            end
        end
        // left - d_nw: both differences worked out from the register, one
        // picked by d_nw.
        if (d_nw == 2'd1) begin
            d_left_reg <= d_leftm1;
            {f_left0, f_left1, f_left2} <= {f_left1, f_left2, f_left3};
        end else if (d_nw == 2'd2) begin
            d_left_reg <= d_leftm2;
            {f_left0, f_left1, f_left2} <= {f_left2, f_left3, f_left4};
        end
        if (d_beat) begin
            d_prev_reg <= d_cur_data;
            d_prevk_reg <= d_cur_keep;
            d_k_reg <= d_k1;
            d_waddr_reg <= d_waddr_n;
            d_wan_reg <= d_wan_n;
            d_wst_reg <= d_q0_reg[19];
            d_bofs_reg <= d_bofs_reg + 1'b1;
            d_win_reg <= d_winn_reg;
            d_wne_reg <= d_wnen_reg;
            d_winn_reg <= win_mask(d_q0_reg, d_q1_reg, d_lo_reg, d_hi_reg);
            d_wnen_reg <= win_ne(d_q0_reg, d_q1_reg, d_lhne_reg);
            d_q0_reg <= d_q0m1;
            d_q1_reg <= d_q1m1;
        end
    end
    if (d_beat && d_cur_tlast) begin
        d_last_reg <= d_cur_ulast;
        d_octs_reg <= d_octs;
    end
    if (rst) begin
        d1_active_reg <= 1'b0;
        d_state_reg <= D_DATA;
        d_bleft_reg <= {BW{1'b0}};
        {f_bl0, f_bl1, f_bl2} <= 3'b100;
    end
end

// D2: the piece's end. Payload octets of the piece are those past the
// header, up to the end of the ULPDU's payload; a piece that does not end
// its ULPDU leaves the placement context for the next one, a last piece
// queues the ULPDU's delivery record.
reg                    e2_last_reg, e2_en_reg, e2_place_reg, e2_early_reg;
reg [CONN_W-1:0]       e2_conn_reg;
reg [ADDR_W-1:0]       e2_dest_reg;
reg [4:0]              e2_s_reg;
reg [16:0]             e2_octs_reg;
reg [15:0]             e2_remain_reg;
reg [RECC_W-1:0]       e2_rec_reg;
reg [223:0]            e2_rr_reg;
reg [32:0]             e2_diff;          // {octs >= s, octs - s}
// An early ULPDU has no delivery record (and takes no verdict).
wire                   d2_done = d2_valid_reg && (!e2_last_reg || e2_early_reg || rf_in_ready);

assign d2_free = !d2_valid_reg || d2_done;

always @* begin
    e2_diff = fadd({15'd0, e2_octs_reg}, {27'h7ffffff, ~e2_s_reg}, 1'b1);
end

// D3, for a piece that does not end its ULPDU: the payload octets it
// placed, pay = min(max(octs - s, 0), remain), and where the next piece of
// the ULPDU goes on (dest + pay). D3 works out the sums (the low 17 bits
// of dest + diff and dest + remain with their carries, remain - diff,
// diff > remain, and dest's high bits + 1), D4 picks them and writes the
// placement context.
reg                    e3_place_reg, e3_pos_reg;
reg [CONN_W-1:0]       e3_conn_reg;
reg [ADDR_W-1:0]       e3_dest_reg;
reg [15:0]             e3_remain_reg;
reg [16:0]             e3_diff_reg;
reg [RECC_W-1:0]       e3_rec_reg;
reg [223:0]            e3_rr_reg;
wire [ADDR_W-18:0]     e3_hi1;
rnic_incdec #(.W(ADDR_W-17), .DEC(0)) u_e3_hi1 (.x(e3_dest_reg[ADDR_W-1:17]), .y(e3_hi1));

reg                    e4_place_reg, e4_pos_reg, e4_big_reg;
reg [CONN_W-1:0]       e4_conn_reg;
reg [ADDR_W-1:0]       e4_dest_reg;
reg [ADDR_W-18:0]      e4_hi1_reg;
reg [32:0]             e4_nd_reg, e4_nr_reg;     // (bits 17..0 used)
reg [15:0]             e4_remain_reg, e4_rd_reg;
reg [RECC_W-1:0]       e4_rec_reg;
reg [223:0]            e4_rr_reg;
reg [ADDR_W-1:0]       e4_nxt;
reg [15:0]             e4_left;
wire [32:0]            e3_rd = fadd({16'd0, e3_remain_reg}, {15'h7fff, ~e3_diff_reg}, 1'b1);

always @* begin
    e4_nxt = e4_dest_reg;
    e4_left = e4_remain_reg;
    if (e4_pos_reg && e4_big_reg) begin
        e4_nxt = {e4_nr_reg[17] ? e4_hi1_reg : e4_dest_reg[ADDR_W-1:17], e4_nr_reg[16:0]};
        e4_left = 16'd0;
    end else if (e4_pos_reg) begin
        e4_nxt = {e4_nd_reg[17] ? e4_hi1_reg : e4_dest_reg[ADDR_W-1:17], e4_nd_reg[16:0]};
        e4_left = e4_rd_reg;
    end
    if (!e4_place_reg) begin
        e4_nxt = e4_dest_reg;
    end
end

always @(posedge clk) begin
    d3_valid_reg <= d2_done && !e2_last_reg;
    e3_place_reg <= e2_place_reg;
    e3_pos_reg <= e2_diff[32] && e2_diff[16:0] != 17'd0;
    e3_conn_reg <= e2_conn_reg;
    e3_dest_reg <= e2_dest_reg;
    e3_remain_reg <= e2_remain_reg;
    e3_diff_reg <= e2_diff[16:0];
    e3_rec_reg <= e2_rec_reg;
    e3_rr_reg <= e2_rr_reg;
    d4_valid_reg <= d3_valid_reg;
    e4_place_reg <= e3_place_reg;
    e4_pos_reg <= e3_pos_reg;
    e4_big_reg <= gt33({16'd0, e3_diff_reg}, {17'd0, e3_remain_reg});
    e4_conn_reg <= e3_conn_reg;
    e4_dest_reg <= e3_dest_reg;
    e4_hi1_reg <= e3_hi1;
    e4_nd_reg <= fadd({15'd0, e3_dest_reg[16:0]}, {15'd0, e3_diff_reg}, 1'b0);
    e4_nr_reg <= fadd({15'd0, e3_dest_reg[16:0]}, {16'd0, e3_remain_reg}, 1'b0);
    e4_remain_reg <= e3_remain_reg;
    e4_rd_reg <= e3_rd[15:0];
    e4_rec_reg <= e3_rec_reg;
    e4_rr_reg <= e3_rr_reg;
    if (rst) begin
        d3_valid_reg <= 1'b0;
        d4_valid_reg <= 1'b0;
    end
end

always @(posedge clk) begin
    if (d_end_w) begin
        d2_valid_reg <= 1'b1;
        e2_last_reg <= (d_state_reg == D_DATA) ? d_cur_ulast : d_last_reg;
        e2_en_reg <= d_en_reg;
        e2_early_reg <= d_early_reg;
        e2_place_reg <= d_place_reg;
        e2_conn_reg <= d_conn_reg;
        e2_dest_reg <= d_dest_reg;
        e2_s_reg <= d_s_reg;
        e2_octs_reg <= d_octs;
        e2_remain_reg <= d_remain_reg;
        e2_rec_reg <= d_rec_reg;
        e2_rr_reg <= d_rr_next;
    end else if (d2_done) begin
        d2_valid_reg <= 1'b0;
    end
    if (rst) begin
        d2_valid_reg <= 1'b0;
    end
end

// --- configuration (when the pipeline is empty) -----------------------------

wire                 all_idle = !i_inpiece_reg && !hf_out_valid && !c1_valid_reg && !b_valid_reg && !c2_valid_reg
                                && !dc_out_valid && pl_empty && !df_out_valid && !cf_post_reg;

assign s_conn_ready = all_idle;
assign s_stag_ready = all_idle && !s_conn_valid;
assign s_post_ready = all_idle && !s_conn_valid && !s_stag_valid;

wire                 cf_conn = s_conn_valid && s_conn_ready;
wire                 cf_stag = s_stag_valid && s_stag_ready;
wire                 cf_post = s_post_valid && s_post_ready;

reg [CONN_W-1:0]     o_conn_reg;
reg [1:0]            o_qn_reg;
reg [RG_W-1:0]       o_ent_reg;
reg [Q_W-1:0]        o_q;
reg [31:0]           o_first;
reg [RQ_AW:0]        o_cnt;
reg                  o_ok;
reg [CX_W-1:0]       o_cx;

always @(posedge clk) begin
    if (cf_post) begin
        o_conn_reg <= s_post_conn;
        o_qn_reg <= s_post_qn;
        o_ent_reg <= {s_post_addr, s_post_len, s_post_id};
    end
    cf_post_reg <= cf_post;
    if (rst) begin
        cf_post_reg <= 1'b0;
    end
end

always @* begin
    o_q = cx_q(cx_rd_data[3*Q_W-1:0], o_qn_reg);
    {o_first, o_cnt} = o_q;
    o_ok = cx_rd_data[CX_W-1] && o_qn_reg != 2'd3 && o_cnt != (1 << RQ_AW);
    o_cx = cx_rd_data;
    case (o_qn_reg)
        2'd1: o_cx[Q_W +: Q_W] = {o_first, o_cnt + 1'b1};
        2'd2: o_cx[2*Q_W +: Q_W] = {o_first, o_cnt + 1'b1};
        default: o_cx[0 +: Q_W] = {o_first, o_cnt + 1'b1};
    endcase
end

// Table ports: the pipeline's, or configuration's while it is empty.
always @* begin
    cx_rd_en = h_valid && c_adv;
    cx_rd_addr = hf_conn;
    st_rd_en = h_valid && c_adv;
    st_rd_addr = hf_idx32[8 +: STAG_AW];
    rg_rd_en = h_valid && c_adv;
    rg_rd_addr = {hf_conn, hf_hdr[8*9 +: 2], hf_hdr[8*13 +: RQ_AW]};
    cx_wr_en = c2_decide;
    cx_wr_addr = c2_conn_reg;
    cx_wr_data = r_cx;
    st_wr_en = c2_decide && r_inval;
    st_wr_addr = k_idx;
    st_wr_data = {1'b0, e_st_reg};
    rg_wr_en = 1'b0;
    rg_wr_addr = {o_conn_reg, o_qn_reg, o_first[RQ_AW-1:0] + o_cnt[RQ_AW-1:0]};
    rg_wr_data = o_ent_reg;
    dx_wr_en = d4_valid_reg;
    dx_wr_addr = e4_conn_reg;
    dx_wr_data = {e4_place_reg, e4_nxt, e4_left, e4_rec_reg, e4_rr_reg};
    rf_in_valid = d2_valid_reg && e2_last_reg && !e2_early_reg;
    rf_in_data = {e2_en_reg, aw_cnt_reg, e2_conn_reg, e2_rec_reg, e2_rr_reg};
    if (cf_conn) begin
        // (Re)start a connection (RFC 5041 4.3: every queue at MSN 1).
        cx_wr_en = 1'b1;
        cx_wr_addr = s_conn_conn;
        cx_wr_data = {s_conn_enable, s_conn_pd, 1'b0, Q_INIT, Q_INIT, Q_INIT};
        dx_wr_en = 1'b1;
        dx_wr_addr = s_conn_conn;
        dx_wr_data = {DX_W{1'b0}};
    end else if (cf_stag) begin
        st_wr_en = 1'b1;
        st_wr_addr = s_stag_index;
        st_wr_data = {s_stag_entry_valid, s_stag_key, s_stag_pd, s_stag_bound, s_stag_conn,
                      s_stag_access, s_stag_base, s_stag_len, s_stag_addr};
    end else if (cf_post) begin
        cx_rd_en = 1'b1;
        cx_rd_addr = s_post_conn;
    end
    if (cf_post_reg && o_ok) begin
        // The buffer takes the MSN after the last posted one (4.3).
        rg_wr_en = 1'b1;
        cx_wr_en = 1'b1;
        cx_wr_addr = o_conn_reg;
        cx_wr_data = o_cx;
    end
end

// --- delivery: records and verdicts, in the order of last pieces ------------

reg                    cpl_valid_reg = 1'b0;
reg                    err_valid_reg = 1'b0;
reg [CONN_W-1:0]       ev_conn_reg;
reg [RECC_W-1:0]       ev_rec_reg;
reg [223:0]            ev_rr_reg;
reg [15:0]             ev_err_reg;

// V0: the oldest undelivered record, taken from rec_fifo's head, with its
// connection's dead and herr bits looked up as it comes in (a 2^CONN_W-way
// read, a clock of its own). The bits it holds then follow every change:
// the dead bits the deliveries set, the herr bits the B responses set and
// what s_conn clears, each registered (dl_*, hs_*, cc_*) and applied a
// clock after it is made, in the clock's order (a clear last); the lookup
// misses only the changes of the clock it is made in, which come in the
// same way.
reg                    v0_valid_reg = 1'b0;
reg [RF_W-1:0]         v0_data_reg;
// The bits as V0 holds them: the lookup itself (lk) in the clock after
// the load, from then on the bits with the changes applied (up), so that
// the 1024-way lookup is a register's input alone (a mux behind it made
// it 6 levels).
reg                    v0_dlk_reg, v0_hlk_reg, v0_dup_reg, v0_hup_reg;
reg                    v0_src_reg = 1'b0;         // the lookup (1) or the applied bits (0)
wire                   v0_dlk, v0_hlk;
wire                   v0_dead_reg = v0_src_reg ? v0_dlk_reg : v0_dup_reg;
wire                   v0_herr_reg = v0_src_reg ? v0_hlk_reg : v0_hup_reg;
reg                    dl_set_reg = 1'b0;         // a delivery set dead_reg[dl_conn_reg]
reg [CONN_W-1:0]       dl_conn_reg;
reg                    hs_set_reg = 1'b0;         // herr_set, a clock ago
reg [CONN_W-1:0]       hs_conn_reg;
reg                    cc_clr_reg = 1'b0;         // s_conn cleared both bits, a clock ago
reg [CONN_W-1:0]       cc_conn_reg;

wire                   rf_en = v0_data_reg[RF_W-1];
wire [MK_W-1:0]        rf_mark = v0_data_reg[RF_W-2 -: MK_W];
wire [CONN_W-1:0]      rf_conn = v0_data_reg[RF_W-MK_W-2 -: CONN_W];
wire [RECC_W-1:0]      rf_rec = v0_data_reg[224 +: RECC_W];
wire [1:0]             rf_kind = rf_rec[RECC_W-1 -: 2];
wire [CONN_W-1:0]      rh_conn = rf_out_data[RF_W-MK_W-2 -: CONN_W];      // rec_fifo's head
rnic_pick #(.AW(CONN_W)) u_v0_dlk (.v(dead_reg), .a(rh_conn), .y(v0_dlk));
rnic_pick #(.AW(CONN_W)) u_v0_hlk (.v(herr_reg), .a(rh_conn), .y(v0_hlk));
wire [MK_W-1:0]        rh_mark = rf_out_data[RF_W-2 -: MK_W];
wire                   v0_clr = cc_clr_reg && cc_conn_reg == rf_conn;
wire                   v0_dead = (v0_dead_reg || (dl_set_reg && dl_conn_reg == rf_conn)) && !v0_clr;
wire                   v0_herr = (v0_herr_reg || (hs_set_reg && hs_conn_reg == rf_conn)) && !v0_clr;
wire                   ev_free = (!cpl_valid_reg || m_cpl_ready) && (!err_valid_reg || m_err_ready);
// A record waits for the B responses of every burst queued before it (its
// own included): b_cnt has reached its mark. An error response past V0's
// mark waits for V0's delivery, so it is charged to the right record; OKAY
// responses go on, but only up to 2^(MK_W-2) past that mark. While V0 is
// empty and a record is at rec_fifo's head (it moves into V0 at the next
// edge), every response waits that clock. So b_cnt - mark stays within
// -2^BQ_AW (the bursts outstanding, at most bq_fifo's depth; a record's
// mark is aw_cnt at its push) .. 2^(MK_W-2), and its sign bit says whether
// b_cnt has reached the mark however long a record waits. (Without the
// bound, a record that waited while 2^(MK_W-1) later bursts were answered
// read as not done; with no more bursts to come, the block hung.)
//
// V0's two flags, b_cnt - mark >= 0 (bdone) and >= 2^(MK_W-2) (bahead),
// are registers, made at the edge before from the four values b_cnt and
// the mark can take there (b_go or not; V0 loading the head or keeping
// its record), so that BREADY and the delivery start at registers rather
// than at a subtraction (b_cnt to bq_fifo was 7 LUT levels).
reg                    v0_bdone_reg = 1'b0, v0_bahead_reg = 1'b0;
wire [MK_W-1:0]        bd_h0 = b_cnt_reg - rh_mark;
wire [MK_W-1:0]        bd_h1 = b_cnt1_reg - rh_mark;
wire [MK_W-1:0]        bd_v0 = b_cnt_reg - rf_mark;
wire [MK_W-1:0]        bd_v1 = b_cnt1_reg - rf_mark;
wire                   dv_bdone = v0_bdone_reg;
wire                   dv_go = v0_valid_reg && s_verdict_tvalid && ev_free && dv_bdone;
wire                   b_hold = (v0_valid_reg ? dv_bdone && (v0_bahead_reg || b_resp[1]) : rf_out_valid)
                                && b_valid;
// A ULPDU of a connection that is not enabled reports nothing here
// (m_drop reported its pieces), whatever its verdict.
wire                   dv_del = dv_go && !v0_dead && rf_en;
// RFC 5044 8: an MPA error is fatal to the stream; a write's error
// response is an RDMAP Local Catastrophic Error (RFC 5040 7) in place of
// what the ULPDU would have reported; an error record and a Terminate end
// the stream.
wire                   dv_bad = s_verdict_tdata != 3'd0;
wire                   dv_kills = dv_bad || v0_herr || rf_kind == K_ERR || rf_kind == K_TERM;

assign b_go = b_valid && bq_out_valid && !b_hold;
assign herr_set = b_go && b_resp[1];
assign herr_set_conn = bq_out_data;
assign m_axi_bready = (WR_REQ == 0) && bq_out_valid && !b_hold;

assign rf_out_ready = !v0_valid_reg || dv_go;
assign s_verdict_tready = dv_go;

always @(posedge clk) begin
    case ({rf_out_ready, b_go})
    2'b00: {v0_bdone_reg, v0_bahead_reg} <= {!bd_v0[MK_W-1], bd_v0[MK_W-2]};
    2'b01: {v0_bdone_reg, v0_bahead_reg} <= {!bd_v1[MK_W-1], bd_v1[MK_W-2]};
    2'b10: {v0_bdone_reg, v0_bahead_reg} <= {!bd_h0[MK_W-1], bd_h0[MK_W-2]};
    default: {v0_bdone_reg, v0_bahead_reg} <= {!bd_h1[MK_W-1], bd_h1[MK_W-2]};
    endcase
    if (rf_out_ready) begin
        v0_valid_reg <= rf_out_valid;
        v0_data_reg <= rf_out_data;
        v0_dlk_reg <= v0_dlk;
        v0_hlk_reg <= v0_hlk;
        v0_src_reg <= 1'b1;
    end else begin
        v0_dup_reg <= v0_dead;
        v0_hup_reg <= v0_herr;
        v0_src_reg <= 1'b0;
    end
    dl_set_reg <= dv_del && dv_kills;
    dl_conn_reg <= rf_conn;
    hs_set_reg <= herr_set;
    hs_conn_reg <= herr_set_conn;
    cc_clr_reg <= cf_conn;
    cc_conn_reg <= s_conn_conn;
    if (cpl_valid_reg && m_cpl_ready) begin
        cpl_valid_reg <= 1'b0;
    end
    if (err_valid_reg && m_err_ready) begin
        err_valid_reg <= 1'b0;
    end
    if (dv_del) begin
        ev_conn_reg <= rf_conn;
        ev_rec_reg <= rf_rec;
        ev_rr_reg <= v0_data_reg[223:0];
        if (dv_bad) begin
            err_valid_reg <= 1'b1;
            ev_err_reg <= {LAYER_LLP, ETYPE_MPA, 5'd0, s_verdict_tdata};
        end else if (v0_herr) begin
            err_valid_reg <= 1'b1;
            ev_err_reg <= ERR_RDMAP_LOCAL_CATASTROPHIC;
        end else if (rf_kind == K_ERR) begin
            err_valid_reg <= 1'b1;
            ev_err_reg <= rf_rec[15:0];
        end else if (rf_kind == K_CPL || rf_kind == K_TERM) begin
            cpl_valid_reg <= 1'b1;
        end
        if (dv_kills) begin
            dead_reg[rf_conn] <= 1'b1;
        end
    end
    if (herr_set) begin
        herr_reg[herr_set_conn] <= 1'b1;
    end
    if (cf_conn) begin
        dead_reg[s_conn_conn] <= 1'b0;
        herr_reg[s_conn_conn] <= 1'b0;
    end
    if (rst) begin
        v0_valid_reg <= 1'b0;
        dl_set_reg <= 1'b0;
        hs_set_reg <= 1'b0;
        cc_clr_reg <= 1'b0;
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
reg [31:0]             drop_count1_reg = 32'd1;   // drop_count_reg + 1, stepped beside it
wire [31:0]            drop_count2;
rnic_incdec #(.W(32), .DEC(0)) u_drop2 (.x(drop_count1_reg), .y(drop_count2));
reg                    perr_valid_reg = 1'b0;
reg [CONN_W-1:0]       perr_conn_reg = 0;
reg [1:0]              perr_qn_reg = 2'd0;
reg [ID_W-1:0]         perr_id_reg = 0;
reg [1:0]              perr_reason_reg = 2'd0;
reg                    berr_valid_reg = 1'b0;
reg [CONN_W-1:0]       berr_conn_reg = 0;
reg [1:0]              berr_resp_reg = 2'd0;
reg                    done_valid_reg = 1'b0;
reg [CONN_W-1:0]       done_conn_reg = 0;

always @(posedge clk) begin
    // A piece of a connection that is not enabled (C2 has its context).
    // (Not an early one: its in-order copy is reported when it comes.)
    drop_valid_reg <= c2_go && !c_en && !c2_early_reg;
    drop_conn_reg <= c2_conn_reg;
    drop_first_reg <= c2_first_reg;
    if (c2_go && !c_en && !c2_early_reg) begin
        drop_count_reg <= drop_count1_reg;
        drop_count1_reg <= drop_count2;
    end
    // A post not taken: a connection not enabled, QN 3, a full ring.
    perr_valid_reg <= cf_post_reg && !o_ok;
    perr_conn_reg <= o_conn_reg;
    perr_qn_reg <= o_qn_reg;
    perr_id_reg <= o_ent_reg[ID_W-1:0];
    perr_reason_reg <= !cx_rd_data[CX_W-1] ? 2'd3 : o_qn_reg == 2'd3 ? 2'd2 : 2'd1;
    berr_valid_reg <= b_go && b_resp[1];
    berr_conn_reg <= bq_out_data;
    berr_resp_reg <= b_resp;
    // A ULPDU's last piece has left placement: all its writes are queued.
    done_valid_reg <= d2_valid_reg && e2_last_reg && (e2_early_reg || rf_in_ready);
    done_conn_reg <= e2_conn_reg;
    if (rst) begin
        drop_valid_reg <= 1'b0;
        drop_count_reg <= 32'd0;
        drop_count1_reg <= 32'd1;
        perr_valid_reg <= 1'b0;
        berr_valid_reg <= 1'b0;
        done_valid_reg <= 1'b0;
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
assign m_done_valid = done_valid_reg;
assign m_done_conn = done_conn_reg;

assign m_cpl_valid = cpl_valid_reg;
assign m_cpl_conn = ev_conn_reg;
assign {m_cpl_opcode, m_cpl_tagged, m_cpl_qn, m_cpl_msn, m_cpl_len, m_cpl_id, m_cpl_stag,
        m_cpl_inv_stag} = ev_rec_reg[RECC_W-3:16];
assign m_cpl_rr = ev_rr_reg;
assign m_err_valid = err_valid_reg;
assign m_err_conn = ev_conn_reg;
assign {m_err_layer, m_err_etype, m_err_code} = ev_err_reg;

// Not needed: the verdict's conn (the record's is the same), BID (one AXI
// ID: responses in AW order), the remote read right (placement needs write),
// the low halves of the double-width rotations, the sum of TO + length (only
// its carry), the record's kind and error fields on m_cpl, the header
// record's ULPDU-last bit (read on the tlast beat from df_fifo), the upper
// STag index bits (their check is c1_stag_bad's), the ring read's
// unused header bits.
wire unused_ok = &{1'b0, s_verdict_tuser, m_axi_bid, st_acc[1],
    rot_d_cur[DATA_W-1:0], rot_d_prev[DATA_W-1:0], rot_k_cur[KEEP_W-1:0], rot_k_prev[KEEP_W-1:0],
    i_n14_t[32:16], i_n18_t[32:16], e2_diff[31:17], e3_rd[32:16], e4_nd_reg[32:18], e4_nr_reg[32:18],
    b_lt_a, b_gt_a, b_dt_a, b_du_a, b_mon_a, b_long_a, b_sg_a, bs_lt, bs_gt, bs_dt, bs_du, bs_mon, bs_long, bs_sg,
    ev_rec_reg[RECC_W-1 -: 2], ev_rec_reg[15:0], hf_idx32,
    g_bofs[BW+2:BW], fifo_ready2_unused};

endmodule

`resetall
