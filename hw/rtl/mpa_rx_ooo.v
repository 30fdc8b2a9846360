// mpa_rx_ooo: out-of-order delineation for the MPA receive path (RFC 5044
// 6, cases 2 and 3; appendix A.3). Sits on mpa_rx's exception stream and
// passes it on unchanged; from every segment there that came out of order
// (reason 3) on a connection with markers, it finds the FPDUs wholly
// inside the segment through the segment's own markers and hands their
// ULPDUs on, validated, for early placement (m_early). The segment still
// goes out on the exception stream: its octets are the in-order stream's
// once the hole before it closes, and the host (TCP reassembly) gives them
// back to mpa_rx then, which delineates and verifies them again and
// delivers. Delivery is never early; only placement is.
//
// What is found is what iwarp/mpa's OOOReceiver places early from the same
// segment when it holds nothing else out of order (tests/mpa_rx_ooo checks
// it FPDU for FPDU):
//   - every marker whose four octets are in the segment points (FPDUPTR,
//     RFC 5044 4.2, low two bits ignored; 0 = the FPDU right behind the
//     marker) to a candidate ULPDU_Length field;
//   - a candidate is tried when it, and its leading marker if one sits in
//     front of it, lies in the segment, it is not itself a marker position,
//     and it lies past every FPDU already found and every candidate already
//     tried (candidates are taken in marker order);
//   - the FPDU there is found when all of it, from its leading marker to
//     its CRC, is in the segment, its CRC is good (CRCs on), every marker
//     inside it points back to its ULPDU_Length field (the leading one
//     with FPDUPTR 0), and no marker behind its end points to it (the
//     marker that found it lies inside it, RFC 5044 6 case 2);
//   - the FPDU right behind a found one is tried next (case 3), then the
//     candidates of the markers behind it.
// Where a segment's markers disagree with each other (a corrupted or
// hostile stream), the OOOReceiver tries candidates in stream order, the
// block in marker order with the rules above, and they may find different
// subsets; the in-order check that follows is the same either way. The
// block does not know how far the in-order stream has got: the
// OOOReceiver also refuses a candidate inside the FPDU its in-order chain
// is reading, which with markers that agree never lies inside a segment
// beyond that chain.
//
// Interfaces.
// cfg_*: as mpa_rx's (cfg_en is not needed here); written at once,
// cfg_ready is always high. Configure a connection while none of its
// segments is in the block.
// s_exc_* / m_exc_*: mpa_rx's exception stream, tuser = {conn, seq[31:0],
// len[15:0], reason[2:0]}; passed through beat for beat (combinationally).
// A segment to delineate (reason 3, len 1..SEG_OCTETS-DATA_W/8) that finds
// the block free waits 2 clocks at its first beat (the connection's
// settings are read) and then passes through while it is copied into the
// segment buffer. One that comes while the block is still searching the
// one before passes on at once, not searched: the exception stream, and so
// mpa_rx's intake behind it, is never held up by a search. Other segments
// pass at any time.
// m_skip_*: a one-clock pulse (no ready) for each reason-3 segment passed
// on without a search: conn, seq, reason 1 (the block was busy with
// another segment) or 2 (longer than the buffer). Its FPDUs are placed
// when the in-order stream reaches them, as without this block.
// busy: a segment is being searched or ULPDUs found are still to go out.
// m_early_*: one frame per FPDU found, its ULPDU lane-0 aligned, tkeep a
// run from lane 0 (the last beat may be empty: the frame format of
// mpa_rx's pieces), tuser = {seq[31:0] of its ULPDU_Length field,
// ulpdu_len[15:0], conn}; FPDUs of one segment come in stream order.
//
// How. The segment is written into a buffer (sdp_ram, 2^SEG_AW beats)
// stream-aligned, octet s of the stream in lane s mod N (see mpa_rx_align),
// so that markers are word 0 of their beat and FPDUs start on words. The
// markers are then read, one a clock, into a table of candidates. Each
// candidate FPDU is walked a beat a clock through an mpa_rx_lane (CRC32c
// and ULPDU packing) into an output buffer that keeps the frame only if
// its verdict is good. The walk is set up from the FPDU's header over four
// clocks, works out each beat's figures a beat ahead and hands the lane a
// registered command (see "the walk through one FPDU"), so that its logic
// stays shallow; the marker checks that make an FPDU bad are made beside
// the lane. One candidate at a time: about 16 clocks per FPDU plus one
// per beat, and the segment's beats once more to copy it. Latency is not a
// goal here; placement of the in-order stream is the fast path.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module mpa_rx_ooo #(
    parameter DATA_W = 64,
    parameter CONN_W = 10,
    parameter SEG_OCTETS = 16384      // segment buffer; longest segment taken: SEG_OCTETS - DATA_W/8
) (
    input  wire                    clk,
    input  wire                    rst,

    input  wire                    cfg_valid,
    output wire                    cfg_ready,
    input  wire [CONN_W-1:0]       cfg_conn,
    input  wire                    cfg_mrk_en,
    input  wire                    cfg_crc_en,
    input  wire [31:0]             cfg_base,

    input  wire [DATA_W-1:0]       s_exc_tdata,
    input  wire [DATA_W/8-1:0]     s_exc_tkeep,
    input  wire                    s_exc_tvalid,
    output wire                    s_exc_tready,
    input  wire                    s_exc_tlast,
    input  wire [CONN_W+50:0]      s_exc_tuser,

    output wire [DATA_W-1:0]       m_exc_tdata,
    output wire [DATA_W/8-1:0]     m_exc_tkeep,
    output wire                    m_exc_tvalid,
    input  wire                    m_exc_tready,
    output wire                    m_exc_tlast,
    output wire [CONN_W+50:0]      m_exc_tuser,

    output reg  [DATA_W-1:0]       m_early_tdata,
    output reg  [DATA_W/8-1:0]     m_early_tkeep,
    output reg                     m_early_tvalid,
    input  wire                    m_early_tready,
    output reg                     m_early_tlast,
    output reg  [CONN_W+47:0]      m_early_tuser,

    output reg                     m_skip_valid,
    output reg  [CONN_W-1:0]       m_skip_conn,
    output reg  [31:0]             m_skip_seq,
    output reg  [1:0]              m_skip_reason,

    output wire                    busy
);

localparam N = DATA_W / 8;
localparam LN = $clog2(N);
localparam WORDS = DATA_W / 32;
localparam WL = $clog2(WORDS) + 1;
localparam OL = LN + 1;
localparam SEG_AW = $clog2(SEG_OCTETS) - LN;
localparam PW = 17;                              // a position in the buffer (< SEG_OCTETS + N), with room above
localparam K = SEG_OCTETS / 512 + 1;             // markers a segment can hold
localparam KW = $clog2(K + 1);
localparam integer SEG_MAX_I = SEG_OCTETS - N;
localparam [15:0] SEG_MAX = SEG_MAX_I[15:0];
localparam [2:0] EXC_OUT_OF_ORDER = 3'd3;
localparam OUT_W = DATA_W + N + 1 + 32 + 16 + CONN_W;
localparam [WL-1:0] WORDS_W = WORDS[WL-1:0];
localparam [KW-1:0] K_W = K[KW-1:0];

initial begin
    if (DATA_W != 64 && DATA_W != 128 && DATA_W != 256 && DATA_W != 512) begin
        $error("mpa_rx_ooo: DATA_W must be 64, 128, 256 or 512, not %0d", DATA_W);
        $finish;
    end
    if (SEG_OCTETS < 1024 || SEG_OCTETS > 32768 || (SEG_OCTETS & (SEG_OCTETS - 1)) != 0) begin
        $error("mpa_rx_ooo: SEG_OCTETS must be a power of two in 1024..32768, not %0d", SEG_OCTETS);
        $finish;
    end
end

// ---- per-connection settings ---------------------------------------------------------
// {markers, CRCs, base mod 512}

assign cfg_ready = 1'b1;

wire [CONN_W-1:0] x_conn = s_exc_tuser[CONN_W+50:51];
wire [31:0]       x_seq = s_exc_tuser[50:19];
wire [15:0]       x_len = s_exc_tuser[18:3];
wire [2:0]        x_reason = s_exc_tuser[2:0];

localparam [3:0] S_IDLE = 4'd0, S_LOOK = 4'd1, S_CAP = 4'd2, S_FLUSH = 4'd3, S_DISC = 4'd4,
                 S_SEL = 4'd5, S_HDR = 4'd6, S_HDR2 = 4'd7, S_WALK = 4'd8, S_VWAIT = 4'd9,
                 S_HDR3 = 4'd10, S_HDR4 = 4'd11;
reg [3:0] state_reg;

reg exc_mid_reg;           // inside an exception frame: the next beat is not a first beat
wire x_ooo = x_reason == EXC_OUT_OF_ORDER && x_len != 16'd0;
wire x_cap = x_ooo && x_len <= SEG_MAX;
wire x_first_cap = !exc_mid_reg && x_cap;
// Searching the segment before: this one passes on without a search.
wire scanning = state_reg != S_IDLE && state_reg != S_LOOK && state_reg != S_CAP;
wire look = state_reg == S_IDLE && s_exc_tvalid && x_first_cap;

wire [10:0] set_rd;
sdp_ram #(.WIDTH(11), .ADDR_W(CONN_W)) set_ram (
    .clk(clk),
    .wr_en(cfg_valid), .wr_addr(cfg_conn), .wr_data({cfg_mrk_en, cfg_crc_en, cfg_base[8:0]}),
    .rd_en(look), .rd_addr(x_conn), .rd_data(set_rd)
);

// ---- the exception stream, passed through ----------------------------------------------

wire x_open = exc_mid_reg || !x_cap || state_reg == S_CAP || scanning;
assign m_exc_tdata = s_exc_tdata;
assign m_exc_tkeep = s_exc_tkeep;
assign m_exc_tlast = s_exc_tlast;
assign m_exc_tuser = s_exc_tuser;
assign m_exc_tvalid = s_exc_tvalid && x_open;
assign s_exc_tready = m_exc_tready && x_open;
wire x_go = s_exc_tvalid && s_exc_tready;

// ---- the segment being delineated ------------------------------------------------------

reg              cap_en_reg;     // copy it (markers on)
reg              crc_en_reg;
reg [CONN_W-1:0] conn_reg;
reg [31:0]       seq_reg;
reg [LN-1:0]     a_reg;          // lane of its first octet: (seq - base) mod N
reg [8:0]        mb_reg;         // stream offset of buffer position 0, mod 512
reg [PW-1:0]     e_reg;          // buffer position past its last octet
reg [DATA_W-1:0] prev_reg;       // the previous input beat
reg [SEG_AW:0]   wr_beat_reg;

// Stream alignment: beat k of the buffer is input beats k-1 and k, shifted
// up by a lanes.
wire [2*DATA_W-1:0] dbl_in = {s_exc_tdata, prev_reg};
wire [2*DATA_W-1:0] dbl_fl = {{DATA_W{1'b0}}, prev_reg};
wire [OL-1:0]       a_up = {1'b1, {LN{1'b0}}} - {1'b0, a_reg};
wire [DATA_W-1:0]   al_in = dbl_in[{a_up, 3'b000} +: DATA_W];
wire [DATA_W-1:0]   al_fl = dbl_fl[{a_up, 3'b000} +: DATA_W];

// The last input beat leaves octets for one more buffer beat when
// a + (len mod N, or N) > N.
wire [OL-1:0] len_tail = (x_len[LN-1:0] == {LN{1'b0}}) ? {1'b1, {LN{1'b0}}} : {1'b0, x_len[LN-1:0]};
reg           extra_reg;

wire             seg_wr = (state_reg == S_CAP && cap_en_reg && x_go) || state_reg == S_FLUSH;
wire [DATA_W-1:0] seg_wd = state_reg == S_FLUSH ? al_fl : al_in;
reg              seg_re;
reg [SEG_AW-1:0] seg_ra;
wire [DATA_W-1:0] seg_rd;

sdp_ram #(.WIDTH(DATA_W), .ADDR_W(SEG_AW)) seg_ram (
    .clk(clk),
    .wr_en(seg_wr), .wr_addr(wr_beat_reg[SEG_AW-1:0]), .wr_data(seg_wd),
    .rd_en(seg_re), .rd_addr(seg_ra), .rd_data(seg_rd)
);

// Marker positions: stream offset mod 512 == 0, i.e. buffer position p with
// (mb + p) mod 512 == 0.
function is_mk;
    input [8:0] mb;
    input [PW-1:0] p;
    reg [8:0] sum;
    reg unused;
    begin
        unused = &{1'b0, p[PW-1:9]};
        sum = mb + p[8:0];
        is_mk = sum == 9'd0;
    end
endfunction

// ---- the candidates: one per marker -------------------------------------------------------

reg [PW-1:0] mk_pos_reg;       // next marker to read
reg [KW-1:0] mk_n_reg;         // markers read
reg          d_valid_reg;      // a marker's beat is on seg_rd
reg [PW-1:0] d_pos_reg;
reg [KW-1:0] d_idx_reg;
reg [PW-1:0] t_tab [0:K-1];    // its candidate's position
reg [PW-1:0] m_tab [0:K-1];    // the marker's position
reg [K-1:0]  v_tab;            // the candidate lies at or after position 0

wire [15:0] d_ptr = {seg_rd[23:16], seg_rd[31:26], 2'b00};
wire [PW:0] d_back = {1'b0, d_pos_reg} - {{(PW-15){1'b0}}, d_ptr};
wire [PW-1:0] d_t = d_ptr == 16'd0 ? d_pos_reg + 4 : d_back[PW-1:0];
wire d_ok = d_ptr == 16'd0 || !d_back[PW];

wire [PW-1:0] mk_end = mk_pos_reg + 4;
wire disc_more = state_reg == S_DISC && mk_end <= e_reg && mk_n_reg < K_W;

// ---- candidate selection ----------------------------------------------------------------

reg [KW-1:0] sel_i_reg;
reg [PW-1:0] cov_reg;          // past the last FPDU found
reg [PW-1:0] floor_reg;        // past the last candidate tried
reg [PW-1:0] s_reg;            // the candidate being tried: its ULPDU_Length
reg [PW-1:0] from_reg;         // its first octet (its leading marker, if any)
reg          lead_reg;

wire [PW-1:0] c_t = t_tab[sel_i_reg];
wire          c_lead = is_mk(mb_reg, c_t - 4);
wire [PW-1:0] c_from = c_lead ? c_t - 4 : c_t;
wire          c_take = v_tab[sel_i_reg] && !is_mk(mb_reg, c_t) && c_t >= floor_reg &&
                       c_from >= cov_reg && c_from >= {{(PW-LN){1'b0}}, a_reg} && (!c_lead || c_t >= 4) &&
                       c_t + 8 <= e_reg;   // room for the shortest FPDU (header, pad, CRC)
wire          sel_end = sel_i_reg >= mk_n_reg;

// ---- the walk through one FPDU --------------------------------------------------------------
// The walker makes one command a beat for the lane from its registers: a
// beat's figures (content words and ULPDU octets in it, whether the CRC
// word is in it, its marker) are worked out one beat ahead, against
// thresholds that are constants or set per FPDU. The command register C
// holds a beat's command while the beat is read from the buffer, and the
// lane takes it from there. C also checks the beat's marker against the
// beat's octets; a bad marker, an FPDU cut by the segment's end, or a
// marker behind the FPDU pointing to it (checked after the walk) make the
// FPDU bad outside the lane, which then drops its frame as for a bad CRC.

localparam MW = 9 - LN;                     // MKP = 2^MW beats from one marker to the next
localparam integer NI = N;
localparam integer W2I = 2 * WORDS;
localparam integer N2I = 2 * N;
localparam [6:0] W2 = W2I[6:0];
localparam [OL+1:0] N2 = N2I[OL+1:0];
localparam [OL-1:0] NO = NI[OL-1:0];
localparam [OL+1:0] FOUR = 4;

reg [SEG_AW:0] k_reg;          // the walker's beat
reg            wk_reg;         // it has a beat to issue
reg            first_reg;
reg            kmk_reg;        // a marker in the beat's word 0 (not on the first beat)
reg [MW-1:0]   mkc_reg;        // beats after this one to the next marker beat, less 1
reg [14:0]     t_rem_reg;      // content words left (the beat's on), the CRC word included
reg [15:0]     u_rem_reg;      // ULPDU octets left
reg [15:0]     ulen_reg;
reg [15:0]     h_len_reg;
reg [WL-1:0]   avail_reg;      // content words in the beat
reg            w_ends_reg;     // its CRC word is in the beat
reg [WL-1:0]   crcw_reg;       // ... that word (mod 2^WL)
reg [6:0]      thr_t0_reg;     // next beat ends the FPDU if t_rem <= this (no marker in it)
reg [6:0]      thr_t1_reg;     // ... (a marker in it)
reg [OL-1:0]   ulp_lo_reg;     // the ULPDU's first lane in the beat
reg [OL-1:0]   room_reg;       // N - ulp_lo
reg            u_fills_reg;    // u_rem >= room
reg [OL-1:0]   uh_reg;         // ulp_lo + u_rem (mod 2^OL; the ULPDU's end if it ends here)
reg [OL+1:0]   thr_u0_reg;     // next beat filled if u_rem >= this (no marker in it)
reg [OL+1:0]   thr_u1_reg;     // ... (a marker in it)
reg            k_last_reg;     // the beat holds the segment's last octet
reg [PW-1:0]   dist_reg;       // k * N - s
reg [PW-1:0]   kp4_reg;        // k * N + 4
reg            mkbad_reg;      // the FPDU is bad (markers, or cut by the segment's end)
reg [PW-1:0]   end_reg;        // past the FPDU's CRC
reg            vgot_reg, vgood_reg, fdone_reg;
// per segment
reg [SEG_AW:0] lastk_reg;      // the beat of its last octet
reg [SEG_AW:0] lastkm1_reg;
reg [WL-1:0]   e_w_reg;        // whole words of it in that beat
reg [MW-1:0]   mk0_reg;        // the first marker beat, mod MKP

wire [WL-1:0] s_w = {1'b0, s_reg[LN-1:2]};
wire          w_abort = k_last_reg && (!w_ends_reg || crcw_reg >= e_w_reg);
wire          w_last = w_ends_reg || w_abort;
// the next beat
wire          kmk_n = mkc_reg == {MW{1'b0}};
wire [14:0]   t_rem_n = t_rem_reg - {{(15-WL){1'b0}}, avail_reg};
wire          le_t0 = t_rem_reg <= {8'd0, thr_t0_reg};
wire          le_t1 = t_rem_reg <= {8'd0, thr_t1_reg};
wire          ge_u0 = u_rem_reg >= {{(16-OL-2){1'b0}}, thr_u0_reg};
wire          ge_u1 = u_rem_reg >= {{(16-OL-2){1'b0}}, thr_u1_reg};
wire [OL-1:0] u_low_n = u_fills_reg ? u_rem_reg[OL-1:0] - room_reg : {OL{1'b0}};

// ---- C: the beat's command, its octets on seg_rd --------------------------------------------

reg            c_valid_reg;
reg            c_first_reg, c_last_reg, c_abort_reg, c_lead_reg, c_kmk_reg;
reg [PW-1:0]   c_dist_reg;
reg [WL-1:0]   c_crc_lo_reg, c_crc_hi_reg, c_crcw_reg;
reg [OL-1:0]   c_ulp_lo_reg, c_ulp_hi_reg;

wire lane_ready;
wire c_adv = !c_valid_reg || lane_ready;
wire issue = state_reg == S_WALK && wk_reg && c_adv;
wire l_take = c_valid_reg && lane_ready;
// The beat's marker: the leading one must say 0, one inside the distance
// back to the ULPDU_Length field, in words (FPDUPTR's low bits ignored, as
// in mpa_rx_walk).
wire [13:0]   w_ptr = {seg_rd[23:16], seg_rd[31:26]};
wire          w_mkbad = c_first_reg ? (c_lead_reg && w_ptr != 14'd0) :
                        (c_kmk_reg && {{(PW-16){1'b0}}, w_ptr} != c_dist_reg[PW-1:2]);
wire [15:0]   h_len = {seg_rd[32*s_w +: 8], seg_rd[32*s_w + 8 +: 8]};

// Per segment: its last octet's position, the octets of the segment in
// that beat, the first marker beat.
wire [PW-1:0] e_last = e_reg - 1'b1;
wire [LN:0]   e_lo = {1'b0, e_last[LN-1:0]} + 1'b1;
wire [8:0]    mk_first = 9'd0 - mb_reg;

// No marker behind the FPDU may point to it: checked over two clocks after
// the walk (lb_*), before the verdict can be used.
reg [K-1:0]   lb_vec_reg;
reg           lb_reg;
reg [1:0]     lb_n_reg;
integer li;

// ---- the lane: CRC32c, ULPDU packing, verdict ---------------------------------------------------

wire [DATA_W-1:0] p_tdata;
wire [N-1:0]      p_tkeep;
wire              p_tvalid, p_tlast, p_first_unused, p_last_unused;
wire              p_tready;
wire [CONN_W-1:0] p_conn_unused, v_conn_unused, wb_conn_unused;
wire [15:0]       p_ulen;
wire [7:0]        p_seq_unused, v_vseq_unused;
wire              v_valid;
wire [2:0]        v_code;
wire              wb_valid_unused;
wire [31:0]       wb_state_unused;

mpa_rx_lane #(.DATA_W(DATA_W), .CONN_W(CONN_W)) lane (
    .clk(clk), .rst(rst),
    .s_valid(c_valid_reg), .s_ready(lane_ready), .s_data(seg_rd),
    .s_crc_lo(c_crc_lo_reg), .s_crc_hi(c_crc_hi_reg), .s_crcw(c_crcw_reg[WL-2:0]),
    .s_ulp_lo(c_ulp_lo_reg), .s_ulp_hi(c_ulp_hi_reg),
    .s_run_first(c_first_reg), .s_run_last(c_last_reg), .s_resume(1'b0), .s_nopiece(1'b0),
    .s_state(32'd0), .s_fpdu_first(1'b1), .s_fpdu_end(1'b1), .s_conn(conn_reg),
    .s_ulen(ulen_reg), .s_crc_en(crc_en_reg), .s_mkbad(1'b0), .s_lenbad(1'b0),
    .s_seq(8'd0), .s_vseq(8'd0),
    .m_tdata(p_tdata), .m_tkeep(p_tkeep), .m_tvalid(p_tvalid), .m_tready(p_tready),
    .m_tlast(p_tlast), .m_conn(p_conn_unused), .m_ulen(p_ulen), .m_first(p_first_unused),
    .m_last(p_last_unused), .m_seq(p_seq_unused),
    .v_valid(v_valid), .v_ready(1'b1), .v_conn(v_conn_unused), .v_code(v_code),
    .v_vseq(v_vseq_unused),
    .wb_valid(wb_valid_unused), .wb_conn(wb_conn_unused), .wb_state(wb_state_unused)
);

// ---- output buffer: a frame is kept only if its verdict is good -------------------------------

reg [SEG_AW:0] o_wp_reg, o_cp_reg, o_rp_reg;   // written, committed, read
wire [SEG_AW:0] o_used = o_wp_reg - o_rp_reg;
// Room for the lane's next word, from registers: room in the next clock
// while at least two words will be free after this clock's write (at most
// one goes in a clock), so the buffer holds up to 2^SEG_AW - 1 words; a
// frame waiting for its verdict (at most 2047 words of a 9000-octet ULPDU
// at W = 64) fits.
reg o_room_reg;
assign p_tready = o_room_reg;
wire o_push = p_tvalid && p_tready;
// The FPDU's ULPDU_Length field's sequence number, set up before its walk:
// base = seq - a per segment (two clocks after it is known), then s_seq =
// base + s in two steps.
reg [17:0] bl_reg;
reg [31:0] base_reg;
reg [17:0] sl_reg;
reg [31:0] s_seq32;

reg  o_vld_reg;                  // o_rd holds a word not yet at the output
wire o_move = o_vld_reg && (!m_early_tvalid || m_early_tready);
wire o_issue = o_rp_reg != o_cp_reg && (!o_vld_reg || o_move);
wire [OUT_W-1:0] o_rd;

sdp_ram #(.WIDTH(OUT_W), .ADDR_W(SEG_AW)) out_ram (
    .clk(clk),
    .wr_en(o_push), .wr_addr(o_wp_reg[SEG_AW-1:0]),
    .wr_data({p_tdata, p_tkeep, p_tlast, s_seq32, p_ulen, conn_reg}),
    .rd_en(o_issue), .rd_addr(o_rp_reg[SEG_AW-1:0]), .rd_data(o_rd)
);

always @(posedge clk) begin
    if (m_early_tvalid && m_early_tready) begin
        m_early_tvalid <= 1'b0;
    end
    if (o_move) begin
        m_early_tvalid <= 1'b1;
        {m_early_tdata, m_early_tkeep, m_early_tlast, m_early_tuser} <= o_rd;
    end
    o_vld_reg <= o_issue || (o_vld_reg && !o_move);
    o_room_reg <= o_used < {1'b0, {SEG_AW{1'b1}}} && !(o_push && o_used == {1'b0, {SEG_AW{1'b1}}} - 1'b1);
    if (o_issue) begin
        o_rp_reg <= o_rp_reg + 1'b1;
    end
    if (rst) begin
        m_early_tvalid <= 1'b0;
        o_vld_reg <= 1'b0;
        o_rp_reg <= {(SEG_AW + 1){1'b0}};
        o_room_reg <= 1'b0;
    end
end

assign busy = state_reg != S_IDLE || o_rp_reg != o_wp_reg || o_vld_reg || m_early_tvalid;

// ---- control ------------------------------------------------------------------------------

// After an FPDU is found: the one right behind it (past a marker at its
// end), worked out while the verdict is awaited. The verdict is taken from
// registers: the lane's (vgot, vgood), its frame's end (fdone), and the
// checks outside the lane (mkbad, lb).
reg [PW-1:0]  next_s_reg;
reg           next_mk_reg;
wire          v_done = vgot_reg && fdone_reg && lb_n_reg == 2'd2;
wire          v_good = vgood_reg && !mkbad_reg && !lb_reg;

always @(*) begin
    seg_re = 1'b0;
    seg_ra = mk_pos_reg[SEG_AW+LN-1:LN];
    case (state_reg)
    S_DISC: seg_re = disc_more;
    S_HDR: begin
        seg_re = 1'b1;
        seg_ra = from_reg[SEG_AW+LN-1:LN];
    end
    S_WALK: begin
        seg_re = issue;
        seg_ra = k_reg[SEG_AW-1:0];
    end
    default: ;
    endcase
end

always @(posedge clk) begin
    if (x_go) begin
        exc_mid_reg <= !s_exc_tlast;
    end
    m_skip_valid <= x_go && !exc_mid_reg && x_ooo && (!x_cap || scanning);
    m_skip_conn <= x_conn;
    m_skip_seq <= x_seq;
    m_skip_reason <= x_cap ? 2'd1 : 2'd2;
    d_valid_reg <= 1'b0;
    if (o_push) begin
        o_wp_reg <= o_wp_reg + 1'b1;
    end

    case (state_reg)
    S_IDLE: begin
        if (look) begin
            conn_reg <= x_conn;
            seq_reg <= x_seq;
            state_reg <= S_LOOK;
        end
    end
    S_LOOK: begin
        cap_en_reg <= set_rd[10];
        crc_en_reg <= set_rd[9];
        a_reg <= seq_reg[LN-1:0] - set_rd[LN-1:0];
        mb_reg <= seq_reg[8:0] - set_rd[8:0] - {{(9-LN){1'b0}}, seq_reg[LN-1:0] - set_rd[LN-1:0]};
        prev_reg <= {DATA_W{1'b0}};
        wr_beat_reg <= {(SEG_AW + 1){1'b0}};
        state_reg <= S_CAP;
    end
    S_CAP: begin
        if (x_go) begin
            prev_reg <= s_exc_tdata;
            if (seg_wr) begin
                wr_beat_reg <= wr_beat_reg + 1'b1;
            end
            if (!exc_mid_reg) begin
                e_reg <= {{(PW-LN){1'b0}}, a_reg} + {{(PW-16){1'b0}}, x_len};
                extra_reg <= {1'b0, a_reg} + len_tail > {1'b1, {LN{1'b0}}};
            end
            if (s_exc_tlast) begin
                state_reg <= !cap_en_reg ? S_IDLE :
                             ((!exc_mid_reg ? {1'b0, a_reg} + len_tail > {1'b1, {LN{1'b0}}} : extra_reg) ?
                              S_FLUSH : S_DISC);
            end
        end
        // The first marker position at or after the segment's first octet.
        mk_pos_reg <= (mb_reg == 9'd0 && a_reg != {LN{1'b0}}) ? 512 :
                      {{(PW-9){1'b0}}, 9'd0 - mb_reg};
        mk_n_reg <= {KW{1'b0}};
    end
    S_FLUSH: begin
        state_reg <= S_DISC;
    end
    S_DISC: begin
        if (disc_more) begin
            d_valid_reg <= 1'b1;
            d_pos_reg <= mk_pos_reg;
            d_idx_reg <= mk_n_reg;
            mk_pos_reg <= mk_pos_reg + 512;
            mk_n_reg <= mk_n_reg + 1'b1;
        end else if (!d_valid_reg) begin
            sel_i_reg <= {KW{1'b0}};
            cov_reg <= {PW{1'b0}};
            floor_reg <= {PW{1'b0}};
            state_reg <= S_SEL;
        end
    end
    S_SEL: begin
        if (sel_end) begin
            state_reg <= S_IDLE;
        end else begin
            sel_i_reg <= sel_i_reg + 1'b1;
            if (c_take) begin
                s_reg <= c_t;
                from_reg <= c_from;
                lead_reg <= c_lead;
                state_reg <= S_HDR;
            end
        end
    end
    S_HDR: begin
        k_reg <= {1'b0, from_reg[SEG_AW+LN-1:LN]};
        floor_reg <= s_reg + 4;
        state_reg <= S_HDR2;
    end
    S_HDR2: begin
        // The ULPDU_Length field, big-endian, in the word of s (FPDUs
        // start on words).
        h_len_reg <= h_len;
        sl_reg <= {1'b0, base_reg[16:0]} + {1'b0, s_reg[16:0]};
        state_reg <= S_HDR3;
    end
    S_HDR3: begin
        ulen_reg <= h_len_reg;
        u_rem_reg <= h_len_reg;
        // Content words from the ULPDU_Length word through the CRC word:
        // (2 + len + pad) / 4 + 1 = floor((len + 9) / 4).
        t_rem_reg <= {1'b0, h_len_reg[15:2]} + (h_len_reg[1:0] == 2'b11 ? 15'd3 : 15'd2);
        s_seq32 <= {base_reg[31:17] + {14'd0, sl_reg[17]}, sl_reg[16:0]};
        first_reg <= 1'b1;
        avail_reg <= WORDS_W - s_w;
        ulp_lo_reg <= {1'b0, s_reg[LN-1:2], 2'b10};
        room_reg <= NO - {1'b0, s_reg[LN-1:2], 2'b10};
        k_last_reg <= k_reg == lastk_reg;
        dist_reg <= {{(PW-SEG_AW-1-LN){1'b0}}, k_reg, {LN{1'b0}}} - s_reg;
        kp4_reg <= {{(PW-SEG_AW-1-LN){1'b0}}, k_reg, {LN{1'b0}}} + 4;
        mkc_reg <= mk0_reg - k_reg[MW-1:0] - 1'b1;
        mkbad_reg <= 1'b0;
        vgot_reg <= 1'b0;
        fdone_reg <= 1'b0;
        state_reg <= S_HDR4;
    end
    S_HDR4: begin
        w_ends_reg <= {{(15-WL){1'b0}}, avail_reg} >= t_rem_reg;
        crcw_reg <= s_w + t_rem_reg[WL-1:0] - 1'b1;
        u_fills_reg <= u_rem_reg >= {{(16-OL){1'b0}}, room_reg};
        uh_reg <= ulp_lo_reg + u_rem_reg[OL-1:0];
        thr_t0_reg <= {{(7-WL){1'b0}}, avail_reg} + {{(7-WL){1'b0}}, WORDS_W};
        thr_t1_reg <= {{(7-WL){1'b0}}, avail_reg} + {{(7-WL){1'b0}}, WORDS_W} - 1'b1;
        thr_u0_reg <= {2'b00, room_reg} + {2'b00, NO};
        thr_u1_reg <= {2'b00, room_reg} + {2'b00, NO} - FOUR;
        wk_reg <= 1'b1;
        state_reg <= S_WALK;
    end
    S_WALK: begin
        if (issue) begin
            if (w_last) begin
                wk_reg <= 1'b0;
                end_reg <= kp4_reg + {{(PW-WL-2){1'b0}}, crcw_reg, 2'b00};
                lb_n_reg <= 2'd0;
                state_reg <= S_VWAIT;
            end else begin
                k_reg <= k_reg + 1'b1;
                first_reg <= 1'b0;
                kmk_reg <= kmk_n;
                mkc_reg <= kmk_n ? {MW{1'b1}} : mkc_reg - 1'b1;   // 2^MW - 1, or one less
                t_rem_reg <= t_rem_n;
                avail_reg <= WORDS_W - {{(WL-1){1'b0}}, kmk_n};
                w_ends_reg <= kmk_n ? le_t1 : le_t0;
                crcw_reg <= t_rem_reg[WL-1:0] - avail_reg + {{(WL-1){1'b0}}, kmk_n} - 1'b1;
                thr_t0_reg <= W2 - {6'd0, kmk_n};
                thr_t1_reg <= W2 - 7'd1 - {6'd0, kmk_n};
                u_rem_reg <= u_fills_reg ? u_rem_reg - {{(16-OL){1'b0}}, room_reg} : 16'd0;
                ulp_lo_reg <= {{(OL-3){1'b0}}, kmk_n, 2'b00};
                room_reg <= NO - {{(OL-3){1'b0}}, kmk_n, 2'b00};
                u_fills_reg <= u_fills_reg && (kmk_n ? ge_u1 : ge_u0);
                uh_reg <= {{(OL-3){1'b0}}, kmk_n, 2'b00} + u_low_n;
                thr_u0_reg <= N2 - {{(OL-1){1'b0}}, kmk_n, 2'b00};
                thr_u1_reg <= N2 - FOUR - {{(OL-1){1'b0}}, kmk_n, 2'b00};
                k_last_reg <= k_reg == lastkm1_reg;
                dist_reg <= dist_reg + NI[PW-1:0];
                kp4_reg <= kp4_reg + NI[PW-1:0];
            end
        end
    end
    S_VWAIT: begin
        if (v_valid) begin
            vgot_reg <= 1'b1;
            vgood_reg <= v_code == 3'd0;
        end
        if (o_push && p_tlast) begin
            fdone_reg <= 1'b1;
        end
        if (lb_n_reg != 2'd2) begin
            lb_n_reg <= lb_n_reg + 1'b1;
        end
        if (v_done) begin
            if (v_good) begin
                o_cp_reg <= o_wp_reg;
                cov_reg <= end_reg;
                if (end_reg < e_reg) begin
                    // RFC 5044 6 case 3: the FPDU right behind this one.
                    s_reg <= next_s_reg;
                    from_reg <= end_reg;
                    lead_reg <= next_mk_reg;
                    state_reg <= S_HDR;
                end else begin
                    state_reg <= S_SEL;
                end
            end else begin
                o_wp_reg <= o_cp_reg;
                state_reg <= S_SEL;
            end
        end
    end
    default: state_reg <= S_IDLE;
    endcase

    // C: a command issued, or taken by the lane
    if (l_take) begin
        c_valid_reg <= 1'b0;
        mkbad_reg <= mkbad_reg || w_mkbad || c_abort_reg;
    end
    if (issue) begin
        c_valid_reg <= 1'b1;
        c_first_reg <= first_reg;
        c_last_reg <= w_last;
        c_abort_reg <= w_abort;
        c_lead_reg <= lead_reg;
        c_kmk_reg <= kmk_reg;
        c_dist_reg <= dist_reg;
        c_crc_lo_reg <= first_reg ? {1'b0, from_reg[LN-1:2]} : {WL{1'b0}};
        c_crc_hi_reg <= (w_ends_reg && !w_abort) ? crcw_reg : WORDS_W;
        c_crcw_reg <= crcw_reg;
        c_ulp_lo_reg <= ulp_lo_reg;
        c_ulp_hi_reg <= u_fills_reg ? NO : uh_reg;
    end

    // after the walk: markers behind the FPDU pointing to it; the next FPDU
    for (li = 0; li < K; li = li + 1) begin
        lb_vec_reg[li] <= li < mk_n_reg && v_tab[li] && t_tab[li] == s_reg && m_tab[li] >= end_reg;
    end
    lb_reg <= |lb_vec_reg;
    next_mk_reg <= is_mk(mb_reg, end_reg);
    next_s_reg <= is_mk(mb_reg, end_reg) ? end_reg + 4 : end_reg;

    // per segment, from its settings and length (stable for the search)
    bl_reg <= {1'b0, seq_reg[16:0]} - {{(18-LN){1'b0}}, a_reg};
    base_reg <= {seq_reg[31:17] - {14'd0, bl_reg[17]}, bl_reg[16:0]};
    lastk_reg <= e_last[SEG_AW+LN:LN];
    lastkm1_reg <= e_last[SEG_AW+LN:LN] - 1'b1;
    e_w_reg <= e_lo[LN:2];
    mk0_reg <= mk_first[8:LN];

    if (d_valid_reg) begin
        t_tab[d_idx_reg] <= d_t;
        m_tab[d_idx_reg] <= d_pos_reg;
        v_tab[d_idx_reg] <= d_ok;
    end

    if (rst) begin
        state_reg <= S_IDLE;
        exc_mid_reg <= 1'b0;
        m_skip_valid <= 1'b0;
        d_valid_reg <= 1'b0;
        o_wp_reg <= {(SEG_AW + 1){1'b0}};
        o_cp_reg <= {(SEG_AW + 1){1'b0}};
        v_tab <= {K{1'b0}};
        c_valid_reg <= 1'b0;
        wk_reg <= 1'b0;
    end
end

// Bits not needed: the base above its offset in 512, the word offset of a
// candidate's first octet (a word), the lanes' per-frame fields the block
// keeps itself.
wire unused_ok = &{1'b0, cfg_base[31:9], from_reg[1:0], from_reg[PW-1:SEG_AW+LN], c_dist_reg[1:0],
    p_first_unused, p_last_unused, p_conn_unused, v_conn_unused, wb_conn_unused, p_seq_unused,
    v_vseq_unused, wb_valid_unused, wb_state_unused, c_crcw_reg[WL-1], e_last[PW-1:SEG_AW+LN+1],
    e_lo[1:0], mk_first[LN-1:0]};

endmodule

`resetall
