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
// Reset: rst (held 1 clock or more) clears the flops; then the block
// clears its tables (every connection disabled, every STag entry invalid,
// no ULPDU in pieces: a fresh block, whatever was configured before), and
// the ready outputs s_axis_tready, s_conn_ready, s_stag_ready and
// s_post_ready stay low for the 2^max(CONN_W, STAG_AW) clocks after rst
// falls (4096 at the defaults) while it does.
//
// Configuration (valid/ready each, in priority conn > stag > post; each
// takes effect for the pieces after it): taken between pieces, once every
// piece taken in before it has left placement (a pending request holds
// s_axis_tready low at the next piece's start until then); s_conn and
// s_stag also wait until every write placed before them has been taken by
// the write port and answered (its B response in; on m_wr_*, its last
// request gone), so that once the handshake is done no write of the
// ULPDUs before it reaches memory (the fence: ddp_rx_tables.v's header):
//   s_conn:  conn, enable, pd. (Re)starts a connection: enable, PD, every
//            queue empty with MSN 1 next (RFC 5041 4.3), no error. A
//            disabled (or never configured) connection places nothing and
//            reports nothing on m_cpl/m_err, whatever the verdicts; each of
//            its pieces is reported on m_drop. A restart may come at any
//            time: ULPDUs of the old stream still waiting for their
//            verdicts at the handshake take them, in order, but report
//            nothing (every report on the connection after the handshake
//            is the new stream's) and do not end the new stream. One
//            restart at a time: while ULPDUs that were waiting at the
//            previous restart are undelivered, s_conn_ready stays low
//            (ddp_rx_deliver.v's header). A ULPDU of the old stream cut by
//            the restart: its later pieces are taken as the new stream's.
//   s_stag:  index (STag >> 8), entry_valid, key (STag[7:0]), pd, bound
//            and conn (stream binding: only that connection may use it),
//            access (bit 0 remote write, bit 1 remote read, as
//            ddp.Access), base (TO of the first octet), len, addr (host
//            address of the first octet). Overwrites the entry; writing
//            entry_valid = 0 invalidates it. A ULPDU in pieces that places
//            through the entry and has pieces still to come is cut there
//            (RFC 5041 7.1, 8.1: nothing is placed through an STag but
//            after its checks, and the entry it was checked against is
//            gone): nothing of it is placed after the handshake, it
//            reports Invalid STag (1/1/0) in place of its completion, and
//            its stream ends (nothing more of it is placed or reported
//            until s_conn restarts it), as the Go model's
//            ddp_place_stream. Not seen: 2^16 s_stag writes between two
//            pieces of one ULPDU (ddp_rx_setup's STag generations).
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
//          reported after the error. With it, what the Terminate copies
//          (RFC 5040 4.8; rdmap.Error.Terminate of the model's error):
//          hdrct {M, D}, seglen (with M: the erring ULPDU's length, MPA's
//          ULPDU_Length) and hdr (with D: its DDP header, octet j in
//          hdr[8j+7:8j], 14 octets if tagged (octets 14..17 zero) or 18;
//          zero without D). Every error the checks below find at a ULPDU's
//          first piece has M and D, but a ULPDU shorter than its header
//          (M only, none if it is empty) and a Read Request not in one
//          28-octet segment (neither: rdmap.FormatError carries no
//          header); an error the ULPDU did not find itself (a bad verdict,
//          an error B response, a cut) has neither. The header and length
//          are kept per connection (a table written when the check fails,
//          read when the error is delivered: a stream reports one error).
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
// already being placed finishes through an STag a Send with Invalidate
// invalidated meanwhile (an s_stag write cuts it: s_stag above).
//
// Structure: stage modules, one piece a clock through the checks, one beat
// a clock through placement, with queues between (each file's header has
// its stage's interface and cycle behaviour; ddp_rx_defs.vh the record
// layouts, widths and helper functions they share; rnic_codes.vh the
// ERR_* words, generated from the Go model by internal/hdlcodes):
//   ddp_rx_intake.v   intake: every beat into df_fifo, a header record per
//                     piece into hf_fifo
//   ddp_rx_check.v    H (table reads), C1 (header classification, first
//                     clock of the sums), C1b (second clock, comparisons)
//   ddp_rx_decide.v   C2: the decision in the order above, its effects
//                     written back, a placement descriptor into dc_fifo
//   ddp_rx_setup.v    D0: a piece's placement set-up (rotation, first
//                     address, write range); a continuing piece's fetch
//                     and its STag's generation check (the cut)
//   ddp_rx_place.v    D1 (one input beat a clock, rotated), and in it
//   ddp_rx_retire.v   D2 (piece end, delivery record), D3/D4 (placement
//                     context)
//   ddp_rx_wport.v    output queues (AW, W, records, B) and the write port:
//                     AXI4 at AXI_W = DATA_W or 2 DATA_W, or m_wr_*
//   ddp_rx_tables.v   the context, placement, STag and ring tables, and
//                     configuration (s_conn, s_stag, s_post)
//   ddp_rx_deliver.v  V0: delivery in the order of last pieces (verdicts,
//                     B responses, m_cpl/m_err), and the status pulses
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
    output wire [1:0]              m_err_hdrct,
    output wire [15:0]             m_err_seglen,
    output wire [143:0]            m_err_hdr,

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

`include "ddp_rx_defs.vh"

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


// --- wires between the stages ---------------------------------------------

wire [NCONN-1:0]            herr_reg;
wire                        herr_set;
wire [CONN_W-1:0]           herr_set_conn;
wire [CX_W-1:0]             cx_rd_data;
wire                        dx_rd_en;
wire [CONN_W-1:0]           dx_rd_addr;
wire [DX_W-1:0]             dx_rd_data;
wire [ST_W-1:0]             st_rd_data;
wire [RG_W-1:0]             rg_rd_data;
wire                        cf_post_reg, i_inpiece_reg;
wire [DF_W-1:0]             df_out;
wire                        df_out_valid, df_out_ready, hf_out_valid, c_adv, h_valid;
wire [HF_W-1:0]             h_rec;
wire                        dc_in_ready;
wire [CONN_W-1:0]           hf_conn;
wire [143:0]                hf_hdr;
wire [31:0]                 hf_idx32;
wire                        c1_valid_reg;
wire [CONN_W-1:0]           p1_conn;
wire                        b_valid_reg;
wire [CONN_W-1:0]           b_conn_reg;
wire                        b_first_reg, b_early_reg;
wire [CX_W-1:0]             b_cx_reg;
wire                        b_t_reg, b_l_reg;
wire [3:0]                  b_op_reg;
wire [31:0]                 b_stag_reg, b_msn_reg, b_msn1_reg;
wire [1:0]                  b_qn_reg;
wire [15:0]                 b_n_reg;
wire [4:0]                  b_hlen_reg;
wire                        b_cerr_reg;
wire [15:0]                 b_cerr_code_reg;
wire                        b_stag_bad_reg, b_assoc_bad_reg, b_acc_reg, b_wrap_reg, b_mo_gt_reg, b_rr_eq_reg;
wire [3:0]                  b_z_reg;
wire [ID_W-1:0]             b_id_reg;
wire [ST_W-2:0]             b_st_reg;
wire [72:0]                 bs_lt, bs_gt, bs_dt, bs_du, bs_mon, bs_long;
wire [3:0]                  bs_nobuf, bs_behind;
wire                        c2_valid_reg;
wire [CONN_W-1:0]           c2_conn_reg;
wire                        c2_first_reg, c2_early_reg;
wire [ST_W-2:0]             e_st_reg;
wire [STAG_AW-1:0]          k_idx;
wire                        r_inval, c_en;
wire [CX_W-1:0]             r_cx;
wire                        c2_go, c2_decide, c2_err;
wire [15:0]                 c2_err_code;
wire                        te_rd_en, te_own;
wire [CONN_W-1:0]           te_rd_conn;
wire [DC_W-1:0]             dc_out;
wire                        dc_out_valid, dc_out_ready, aw_in_valid;
wire [ADDR_W+8-1:0]         aw_in_data;
wire                        aw_in_ready, w_in_valid;
wire [DATA_W+KEEP_W:0]      w_in_data;
wire                        w_in_ready, w2_in_valid;
wire [DATA_W+KEEP_W:0]      w2_in_data;
wire                        w_in_ready2, w_in_half, w2_in_half, b_valid;
wire [1:0]                  b_resp;
wire                        rf_in_valid;
wire [RF_W-1:0]             rf_in_data;
wire                        rf_in_ready;
wire [RF_W-1:0]             rf_out_data;
wire                        rf_out_valid, rf_out_ready, bq_in_ready;
wire [CONN_W-1:0]           bq_out_data;
wire                        bq_out_valid, wq_busy, rs_busy, b_go;
wire [MK_W-1:0]             aw_cnt_reg, b_cnt_reg, b_cnt1_reg;
wire [CONN_W-1:0]           d_conn_reg;
wire                        d0_valid_reg, d1_active_reg, d2_valid_reg, d3_valid_reg, d4_valid_reg, d0_take,
                            pl_empty, d_end_w, d0_first_reg, d0_en_reg, d0_place_reg, d0_early_reg;
wire [CONN_W-1:0]           d0_conn_reg;
wire [ADDR_W-1:0]           d0_dest_reg;
wire [4:0]                  d0_s_reg;
wire [15:0]                 d0_remain_reg;
wire [RECC_W-1:0]           d0_rec_reg;
wire [223:0]                d0_rr_reg;
wire [LG-1:0]               d0_r_reg;
wire [KEEP_W-1:0]           d0_win0_reg, d0_win1_reg, d0_lo_reg, d0_hi_reg;
wire                        d0_wz_reg, d0_lhne_reg;
wire [19:0]                 d0_q0_reg, d0_q1_reg;
wire [17:0]                 d0_left_reg;
wire [ADDR_W-1:0]           d0_waddr_reg;
wire [BW-1:0]               d0_bofs_reg;
wire                        d0_wst_reg, e2_last_reg, e2_en_reg, e2_early_reg;
wire [CONN_W-1:0]           e2_conn_reg;
wire [RECC_W-1:0]           e2_rec_reg;
wire [223:0]                e2_rr_reg;
wire                        e4_place_reg;
wire [CONN_W-1:0]           e4_conn_reg;
wire [RECC_W-1:0]           e4_rec_reg;
wire [223:0]                e4_rr_reg;
wire [ADDR_W-1:0]           e4_nxt;
wire [15:0]                 e4_left;
wire                        cf_conn, cf_stag, clr_busy_reg;
wire [NCONN-1:0]            cut_reg;
wire                        cut_set;
wire [CONN_W-1:0]           cut_set_conn, o_conn_reg;
wire [1:0]                  o_qn_reg;
wire [RG_W-1:0]             o_ent_reg;
wire                        o_ok;

ddp_rx_tables #(.DATA_W(DATA_W), .CONN_W(CONN_W), .STAG_AW(STAG_AW), .RQ_AW(RQ_AW), .ADDR_W(ADDR_W), .ID_W(ID_W), .BURST(BURST), .BQ_AW(BQ_AW)) u_tables (
    .clk(clk), .rst(rst), .s_conn_valid(s_conn_valid), .s_conn_conn(s_conn_conn), .s_conn_enable(s_conn_enable),
    .s_conn_pd(s_conn_pd), .s_stag_valid(s_stag_valid), .s_stag_index(s_stag_index),
    .s_stag_entry_valid(s_stag_entry_valid), .s_stag_key(s_stag_key), .s_stag_pd(s_stag_pd),
    .s_stag_bound(s_stag_bound), .s_stag_conn(s_stag_conn), .s_stag_access(s_stag_access),
    .s_stag_base(s_stag_base), .s_stag_len(s_stag_len), .s_stag_addr(s_stag_addr), .s_post_valid(s_post_valid),
    .s_post_conn(s_post_conn), .s_post_qn(s_post_qn), .s_post_addr(s_post_addr), .s_post_len(s_post_len),
    .s_post_id(s_post_id), .dx_rd_en(dx_rd_en), .dx_rd_addr(dx_rd_addr), .i_inpiece_reg(i_inpiece_reg),
    .df_out_valid(df_out_valid), .hf_out_valid(hf_out_valid), .c_adv(c_adv), .h_valid(h_valid),
    .hf_conn(hf_conn), .hf_hdr(hf_hdr), .hf_idx32(hf_idx32), .c1_valid_reg(c1_valid_reg),
    .b_valid_reg(b_valid_reg), .c2_valid_reg(c2_valid_reg), .c2_conn_reg(c2_conn_reg), .e_st_reg(e_st_reg),
    .k_idx(k_idx), .r_inval(r_inval), .r_cx(r_cx), .c2_decide(c2_decide), .dc_out_valid(dc_out_valid),
    .aw_cnt_reg(aw_cnt_reg), .d2_valid_reg(d2_valid_reg), .d4_valid_reg(d4_valid_reg), .pl_empty(pl_empty),
    .e2_last_reg(e2_last_reg), .e2_en_reg(e2_en_reg), .e2_early_reg(e2_early_reg), .e2_conn_reg(e2_conn_reg),
    .e2_rec_reg(e2_rec_reg), .e2_rr_reg(e2_rr_reg), .e4_place_reg(e4_place_reg), .e4_conn_reg(e4_conn_reg),
    .e4_rec_reg(e4_rec_reg), .e4_rr_reg(e4_rr_reg), .e4_nxt(e4_nxt), .e4_left(e4_left),
    .s_conn_ready(s_conn_ready), .s_stag_ready(s_stag_ready), .s_post_ready(s_post_ready),
    .cx_rd_data(cx_rd_data), .dx_rd_data(dx_rd_data), .st_rd_data(st_rd_data), .rg_rd_data(rg_rd_data),
    .cf_post_reg(cf_post_reg), .rf_in_valid(rf_in_valid), .rf_in_data(rf_in_data), .cf_conn(cf_conn),
    .cf_stag(cf_stag), .clr_busy_reg(clr_busy_reg), .o_conn_reg(o_conn_reg), .o_qn_reg(o_qn_reg),
    .o_ent_reg(o_ent_reg), .o_ok(o_ok), .wq_busy(wq_busy), .bq_out_valid(bq_out_valid), .rs_busy(rs_busy)
);

ddp_rx_intake #(.DATA_W(DATA_W), .CONN_W(CONN_W), .RQ_AW(RQ_AW), .ADDR_W(ADDR_W), .ID_W(ID_W), .BURST(BURST), .BQ_AW(BQ_AW)) u_intake (
    .clk(clk), .rst(rst), .s_axis_tdata(s_axis_tdata), .s_axis_tkeep(s_axis_tkeep),
    .s_axis_tvalid(s_axis_tvalid), .s_axis_tlast(s_axis_tlast), .s_axis_tuser(s_axis_tuser),
    .s_conn_valid(s_conn_valid), .s_stag_valid(s_stag_valid), .s_post_valid(s_post_valid),
    .cf_post_reg(cf_post_reg), .clr_busy_reg(clr_busy_reg), .df_out_ready(df_out_ready), .c_adv(c_adv),
    .s_axis_tready(s_axis_tready), .i_inpiece_reg(i_inpiece_reg), .df_out(df_out), .df_out_valid(df_out_valid),
    .hf_out_valid(hf_out_valid), .h_valid(h_valid), .h_rec(h_rec)
);

ddp_rx_check #(.DATA_W(DATA_W), .CONN_W(CONN_W), .STAG_AW(STAG_AW), .RQ_AW(RQ_AW), .ADDR_W(ADDR_W), .ID_W(ID_W), .BURST(BURST), .BQ_AW(BQ_AW)) u_check (
    .clk(clk), .rst(rst), .cx_rd_data(cx_rd_data), .st_rd_data(st_rd_data), .rg_rd_data(rg_rd_data),
    .h_valid(h_valid), .h_rec(h_rec), .dc_in_ready(dc_in_ready), .c_adv(c_adv), .hf_conn(hf_conn),
    .hf_hdr(hf_hdr), .hf_idx32(hf_idx32), .c1_valid_reg(c1_valid_reg), .p1_conn(p1_conn),
    .b_valid_reg(b_valid_reg), .b_conn_reg(b_conn_reg), .b_first_reg(b_first_reg), .b_early_reg(b_early_reg),
    .b_cx_reg(b_cx_reg), .b_t_reg(b_t_reg), .b_l_reg(b_l_reg), .b_op_reg(b_op_reg), .b_stag_reg(b_stag_reg),
    .b_msn_reg(b_msn_reg), .b_msn1_reg(b_msn1_reg), .b_qn_reg(b_qn_reg), .b_n_reg(b_n_reg),
    .b_hlen_reg(b_hlen_reg), .b_cerr_reg(b_cerr_reg), .b_cerr_code_reg(b_cerr_code_reg),
    .b_stag_bad_reg(b_stag_bad_reg), .b_assoc_bad_reg(b_assoc_bad_reg), .b_acc_reg(b_acc_reg),
    .b_wrap_reg(b_wrap_reg), .b_mo_gt_reg(b_mo_gt_reg), .b_rr_eq_reg(b_rr_eq_reg), .b_z_reg(b_z_reg),
    .b_id_reg(b_id_reg), .b_st_reg(b_st_reg), .bs_lt(bs_lt), .bs_gt(bs_gt), .bs_dt(bs_dt), .bs_du(bs_du),
    .bs_mon(bs_mon), .bs_long(bs_long), .bs_nobuf(bs_nobuf), .bs_behind(bs_behind)
);

ddp_rx_decide #(.DATA_W(DATA_W), .CONN_W(CONN_W), .STAG_AW(STAG_AW), .RQ_AW(RQ_AW), .ADDR_W(ADDR_W), .ID_W(ID_W), .BURST(BURST), .BQ_AW(BQ_AW)) u_decide (
    .clk(clk), .rst(rst), .herr_reg(herr_reg), .herr_set(herr_set), .herr_set_conn(herr_set_conn),
    .cut_reg(cut_reg), .cut_set(cut_set), .cut_set_conn(cut_set_conn), .c_adv(c_adv), .p1_conn(p1_conn),
    .b_valid_reg(b_valid_reg), .b_conn_reg(b_conn_reg), .b_first_reg(b_first_reg), .b_early_reg(b_early_reg),
    .b_cx_reg(b_cx_reg), .b_t_reg(b_t_reg), .b_l_reg(b_l_reg), .b_op_reg(b_op_reg), .b_stag_reg(b_stag_reg),
    .b_msn_reg(b_msn_reg), .b_msn1_reg(b_msn1_reg), .b_qn_reg(b_qn_reg), .b_n_reg(b_n_reg),
    .b_hlen_reg(b_hlen_reg), .b_cerr_reg(b_cerr_reg), .b_cerr_code_reg(b_cerr_code_reg),
    .b_stag_bad_reg(b_stag_bad_reg), .b_assoc_bad_reg(b_assoc_bad_reg), .b_acc_reg(b_acc_reg),
    .b_wrap_reg(b_wrap_reg), .b_mo_gt_reg(b_mo_gt_reg), .b_rr_eq_reg(b_rr_eq_reg), .b_z_reg(b_z_reg),
    .b_id_reg(b_id_reg), .b_st_reg(b_st_reg), .bs_lt(bs_lt), .bs_gt(bs_gt), .bs_dt(bs_dt), .bs_du(bs_du),
    .bs_mon(bs_mon), .bs_long(bs_long), .bs_nobuf(bs_nobuf), .bs_behind(bs_behind), .dc_out_ready(dc_out_ready),
    .dc_in_ready(dc_in_ready), .c2_valid_reg(c2_valid_reg), .c2_conn_reg(c2_conn_reg),
    .c2_first_reg(c2_first_reg), .c2_early_reg(c2_early_reg), .e_st_reg(e_st_reg), .k_idx(k_idx),
    .r_inval(r_inval), .c_en(c_en), .r_cx(r_cx), .c2_go(c2_go), .c2_decide(c2_decide), .c2_err(c2_err), .c2_err_code(c2_err_code), .dc_out(dc_out),
    .dc_out_valid(dc_out_valid)
);

ddp_rx_wport #(.DATA_W(DATA_W), .CONN_W(CONN_W), .RQ_AW(RQ_AW), .ADDR_W(ADDR_W), .ID_W(ID_W), .BURST(BURST), .REC_AW(REC_AW), .BQ_AW(BQ_AW), .AXI_W(AXI_W), .WR_REQ(WR_REQ)) u_wport (
    .clk(clk), .rst(rst), .m_axi_awready(m_axi_awready), .m_axi_wready(m_axi_wready), .m_axi_bresp(m_axi_bresp),
    .m_axi_bvalid(m_axi_bvalid), .m_wr_ready(m_wr_ready), .aw_in_valid(aw_in_valid), .aw_in_data(aw_in_data),
    .w_in_valid(w_in_valid), .w_in_data(w_in_data), .w2_in_valid(w2_in_valid), .w2_in_data(w2_in_data),
    .w_in_half(w_in_half), .w2_in_half(w2_in_half), .rf_in_valid(rf_in_valid), .rf_in_data(rf_in_data),
    .rf_out_ready(rf_out_ready), .b_go(b_go), .d_conn_reg(d_conn_reg), .m_axi_awid(m_axi_awid),
    .m_axi_awaddr(m_axi_awaddr), .m_axi_awlen(m_axi_awlen), .m_axi_awsize(m_axi_awsize),
    .m_axi_awburst(m_axi_awburst), .m_axi_awcache(m_axi_awcache), .m_axi_awprot(m_axi_awprot),
    .m_axi_awvalid(m_axi_awvalid), .m_axi_wdata(m_axi_wdata), .m_axi_wstrb(m_axi_wstrb),
    .m_axi_wlast(m_axi_wlast), .m_axi_wvalid(m_axi_wvalid), .m_wr_addr(m_wr_addr), .m_wr_data(m_wr_data),
    .m_wr_strb(m_wr_strb), .m_wr_last(m_wr_last), .m_wr_valid(m_wr_valid), .aw_in_ready(aw_in_ready),
    .w_in_ready(w_in_ready), .w_in_ready2(w_in_ready2), .b_valid(b_valid), .b_resp(b_resp),
    .rf_in_ready(rf_in_ready), .rf_out_data(rf_out_data), .rf_out_valid(rf_out_valid),
    .bq_in_ready(bq_in_ready), .bq_out_data(bq_out_data), .bq_out_valid(bq_out_valid), .aw_cnt_reg(aw_cnt_reg),
    .b_cnt_reg(b_cnt_reg), .b_cnt1_reg(b_cnt1_reg), .wq_busy(wq_busy)
);

ddp_rx_setup #(.DATA_W(DATA_W), .CONN_W(CONN_W), .STAG_AW(STAG_AW), .RQ_AW(RQ_AW), .ADDR_W(ADDR_W), .ID_W(ID_W), .BURST(BURST), .BQ_AW(BQ_AW)) u_setup (
    .clk(clk), .rst(rst), .herr_reg(herr_reg), .herr_set(herr_set), .herr_set_conn(herr_set_conn),
    .cf_conn(cf_conn), .s_conn_conn(s_conn_conn), .cf_stag(cf_stag), .s_stag_index(s_stag_index),
    .dx_rd_data(dx_rd_data), .dc_out(dc_out), .dc_out_valid(dc_out_valid), .d1_active_reg(d1_active_reg),
    .d2_valid_reg(d2_valid_reg), .d3_valid_reg(d3_valid_reg), .d4_valid_reg(d4_valid_reg), .d0_take(d0_take),
    .d_end_w(d_end_w), .dx_rd_en(dx_rd_en), .dx_rd_addr(dx_rd_addr), .dc_out_ready(dc_out_ready),
    .d0_valid_reg(d0_valid_reg), .pl_empty(pl_empty), .d0_first_reg(d0_first_reg), .d0_en_reg(d0_en_reg),
    .d0_place_reg(d0_place_reg), .d0_early_reg(d0_early_reg), .d0_conn_reg(d0_conn_reg),
    .d0_dest_reg(d0_dest_reg), .d0_s_reg(d0_s_reg), .d0_remain_reg(d0_remain_reg), .d0_rec_reg(d0_rec_reg),
    .d0_rr_reg(d0_rr_reg), .d0_r_reg(d0_r_reg), .d0_win0_reg(d0_win0_reg), .d0_win1_reg(d0_win1_reg),
    .d0_lo_reg(d0_lo_reg), .d0_hi_reg(d0_hi_reg), .d0_wz_reg(d0_wz_reg), .d0_lhne_reg(d0_lhne_reg),
    .d0_q0_reg(d0_q0_reg), .d0_q1_reg(d0_q1_reg), .d0_left_reg(d0_left_reg), .d0_waddr_reg(d0_waddr_reg),
    .d0_bofs_reg(d0_bofs_reg), .d0_wst_reg(d0_wst_reg), .cut_reg(cut_reg), .cut_set(cut_set),
    .cut_set_conn(cut_set_conn)
);

ddp_rx_place #(.DATA_W(DATA_W), .CONN_W(CONN_W), .RQ_AW(RQ_AW), .ADDR_W(ADDR_W), .ID_W(ID_W), .BURST(BURST), .BQ_AW(BQ_AW), .WR_REQ(WR_REQ)) u_place (
    .clk(clk), .rst(rst), .df_out(df_out), .df_out_valid(df_out_valid), .aw_in_ready(aw_in_ready),
    .w_in_ready(w_in_ready), .w_in_ready2(w_in_ready2), .rf_in_ready(rf_in_ready), .bq_in_ready(bq_in_ready),
    .d0_valid_reg(d0_valid_reg), .d0_first_reg(d0_first_reg), .d0_en_reg(d0_en_reg),
    .d0_place_reg(d0_place_reg), .d0_early_reg(d0_early_reg), .d0_conn_reg(d0_conn_reg),
    .d0_dest_reg(d0_dest_reg), .d0_s_reg(d0_s_reg), .d0_remain_reg(d0_remain_reg), .d0_rec_reg(d0_rec_reg),
    .d0_rr_reg(d0_rr_reg), .d0_r_reg(d0_r_reg), .d0_win0_reg(d0_win0_reg), .d0_win1_reg(d0_win1_reg),
    .d0_lo_reg(d0_lo_reg), .d0_hi_reg(d0_hi_reg), .d0_wz_reg(d0_wz_reg), .d0_lhne_reg(d0_lhne_reg),
    .d0_q0_reg(d0_q0_reg), .d0_q1_reg(d0_q1_reg), .d0_left_reg(d0_left_reg), .d0_waddr_reg(d0_waddr_reg),
    .d0_bofs_reg(d0_bofs_reg), .d0_wst_reg(d0_wst_reg), .df_out_ready(df_out_ready), .aw_in_valid(aw_in_valid),
    .aw_in_data(aw_in_data), .w_in_valid(w_in_valid), .w_in_data(w_in_data), .w2_in_valid(w2_in_valid),
    .w2_in_data(w2_in_data), .w_in_half(w_in_half), .w2_in_half(w2_in_half), .d_conn_reg(d_conn_reg),
    .d1_active_reg(d1_active_reg), .d2_valid_reg(d2_valid_reg), .d3_valid_reg(d3_valid_reg),
    .d4_valid_reg(d4_valid_reg), .d0_take(d0_take), .d_end_w(d_end_w), .e2_last_reg(e2_last_reg),
    .e2_en_reg(e2_en_reg), .e2_early_reg(e2_early_reg), .e2_conn_reg(e2_conn_reg), .e2_rec_reg(e2_rec_reg),
    .e2_rr_reg(e2_rr_reg), .e4_place_reg(e4_place_reg), .e4_conn_reg(e4_conn_reg), .e4_rec_reg(e4_rec_reg),
    .e4_rr_reg(e4_rr_reg), .e4_nxt(e4_nxt), .e4_left(e4_left)
);

ddp_rx_deliver #(.DATA_W(DATA_W), .CONN_W(CONN_W), .RQ_AW(RQ_AW), .ADDR_W(ADDR_W), .ID_W(ID_W), .BURST(BURST), .BQ_AW(BQ_AW), .REC_AW(REC_AW), .WR_REQ(WR_REQ)) u_deliver (
    .clk(clk), .rst(rst), .s_verdict_tdata(s_verdict_tdata), .s_verdict_tvalid(s_verdict_tvalid),
    .s_conn_conn(s_conn_conn), .m_cpl_ready(m_cpl_ready), .m_err_ready(m_err_ready), .cx_rd_data(cx_rd_data),
    .cf_post_reg(cf_post_reg), .c2_conn_reg(c2_conn_reg), .c2_first_reg(c2_first_reg),
    .c2_early_reg(c2_early_reg), .c_en(c_en), .c2_go(c2_go), .b_valid(b_valid), .b_resp(b_resp),
    .rf_in_ready(rf_in_ready), .rf_out_data(rf_out_data), .rf_out_valid(rf_out_valid),
    .bq_out_data(bq_out_data), .bq_out_valid(bq_out_valid), .b_cnt_reg(b_cnt_reg), .b_cnt1_reg(b_cnt1_reg),
    .d2_valid_reg(d2_valid_reg), .e2_last_reg(e2_last_reg), .e2_early_reg(e2_early_reg),
    .e2_conn_reg(e2_conn_reg), .cf_conn(cf_conn), .o_conn_reg(o_conn_reg), .o_qn_reg(o_qn_reg),
    .o_ent_reg(o_ent_reg), .o_ok(o_ok), .s_verdict_tready(s_verdict_tready), .m_axi_bready(m_axi_bready),
    .m_cpl_valid(m_cpl_valid), .m_cpl_conn(m_cpl_conn), .m_cpl_opcode(m_cpl_opcode),
    .m_cpl_tagged(m_cpl_tagged), .m_cpl_qn(m_cpl_qn), .m_cpl_msn(m_cpl_msn), .m_cpl_len(m_cpl_len),
    .m_cpl_id(m_cpl_id), .m_cpl_stag(m_cpl_stag), .m_cpl_inv_stag(m_cpl_inv_stag), .m_cpl_rr(m_cpl_rr),
    .m_err_valid(m_err_valid), .m_err_conn(m_err_conn), .m_err_layer(m_err_layer), .m_err_etype(m_err_etype),
    .m_err_code(m_err_code), .m_drop_valid(m_drop_valid), .m_drop_conn(m_drop_conn),
    .m_drop_reason(m_drop_reason), .m_drop_first(m_drop_first), .m_drop_count(m_drop_count),
    .m_post_err_valid(m_post_err_valid), .m_post_err_conn(m_post_err_conn), .m_post_err_qn(m_post_err_qn),
    .m_post_err_id(m_post_err_id), .m_post_err_reason(m_post_err_reason), .m_berr_valid(m_berr_valid),
    .m_berr_conn(m_berr_conn), .m_berr_resp(m_berr_resp), .m_done_valid(m_done_valid),
    .m_done_conn(m_done_conn), .herr_reg(herr_reg), .herr_set(herr_set), .herr_set_conn(herr_set_conn),
    .rf_out_ready(rf_out_ready), .b_go(b_go), .rs_busy(rs_busy), .te_rd_en(te_rd_en), .te_rd_conn(te_rd_conn),
    .te_own(te_own)
);

// What the Terminate copies (m_err_hdrct, m_err_seglen, m_err_hdr; the
// header comment). The header record's ULPDU length and header octets
// follow the piece through C1 and C1b to C2 (moving with c_adv, as the
// check stages do); at C2's decision of an error (c2_err) they go, with M
// and D, into the connection's entry of te_ram; V0 reads the entry when it
// delivers a ULPDU (te_rd_en), and the read word is on m_err_* with
// m_err_valid, kept while it waits (te_rd_en only at a delivery). te_own:
// the error is the ULPDU's own record's, not a bad verdict's or a B
// response's (those copy nothing). A stream reports one error, and a
// restart's old ULPDUs report nothing, so the entry read is the one its
// error wrote.
localparam HF_ULEN = HF_CONN + CONN_W;      // 16 bits
reg  [159:0]   te_c1_reg, te_b_reg, te_c2_reg;   // {ulen, octets 0..17}
always @(posedge clk) begin
    if (c_adv) begin
        te_c1_reg <= {h_rec[HF_ULEN +: 16], h_rec[HF_HDR +: 144]};
        te_b_reg <= te_c1_reg;
        te_c2_reg <= te_b_reg;
    end
end
wire [15:0]    te_ulen = te_c2_reg[159:144];
wire           te_tag = te_c2_reg[7];                 // T (RFC 5041 4.1)
wire           te_short = te_ulen < (te_tag ? 16'd14 : 16'd18);
// A Read Request not in one 28-octet segment (the same word as a short
// ULPDU's: that one is told by its length) is rdmap.FormatError: nothing.
wire           te_fmt = c2_err_code == ERR_RDMAP_STREAM_CATASTROPHIC && !te_short;
wire           te_m = !te_fmt && te_ulen != 16'd0;
wire           te_d = !te_fmt && !te_short;
wire [143:0]   te_hdr = te_d ? {te_tag ? 32'd0 : te_c2_reg[143:112], te_c2_reg[111:0]} : 144'd0;
wire [161:0]   te_rd_data;
sdp_ram #(.WIDTH(162), .ADDR_W(CONN_W)) u_te_ram (
    .clk(clk), .wr_en(c2_err), .wr_addr(c2_conn_reg), .wr_data({te_m, te_d, te_m ? te_ulen : 16'd0, te_hdr}),
    .rd_en(te_rd_en), .rd_addr(te_rd_conn), .rd_data(te_rd_data));
reg            te_own_reg = 1'b0;
always @(posedge clk) begin
    if (te_rd_en) te_own_reg <= te_own;
end
assign m_err_hdrct = te_own_reg ? te_rd_data[161:160] : 2'd0;
assign m_err_seglen = te_own_reg ? te_rd_data[159:144] : 16'd0;
assign m_err_hdr = te_own_reg ? te_rd_data[143:0] : 144'd0;

// Not needed: s_verdict_tuser, m_axi_bid.
wire unused_ok = &{1'b0, s_verdict_tuser, m_axi_bid};

endmodule

`resetall
