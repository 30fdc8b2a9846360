// mpa_rx_walk: the FPDU delineator of the MPA receive path. Walks the
// stream-aligned words that mpa_rx_align hands on, finds every FPDU by the
// ULPDU_Length of the one before (RFC 5044 6, in-order case), checks every
// marker's FPDUPTR and every ULPDU_Length, and cuts the words into "runs":
// a run is the part of one FPDU that one segment carries (or consecutive
// segments of a connection walked as one), the unit of one CRC
// computation and of one ULPDU piece. Runs alternate between two lanes
// (mpa_rx_lane: CRC32c, ULPDU packing, verdict), so that a beat holding the
// end of one FPDU and the start of the next feeds both at once.
//
// Words of a beat (stream-aligned, see mpa_rx_align): a marker, when there
// is one, is word 0 and belongs to the FPDU of the word after it: the open
// FPDU (its FPDUPTR must be the distance from that FPDU's ULPDU_Length
// field) or, when a ULPDU_Length field follows it, the new FPDU (FPDUPTR 0,
// RFC 5044 4.3). The CRC covers everything of an FPDU but its CRC word
// (4.4), markers included. FPDUPTR's low two bits and the marker's RESERVED
// half are ignored, as in iwarp/mpa's Receiver.
//
// Per-connection state (sdp_ram, read at the edge where a segment's first
// beat enters the precompute stage, written a clock after its last; a write to the
// same connection at that edge or later, and the running CRC coming back,
// are kept beside the read word and used instead, "the patch"): content words to the next ULPDU_Length field
// (0: at an FPDU boundary), words since the open FPDU's ULPDU_Length field,
// its pad length, and whether one of its markers or its ULPDU_Length was
// bad; and, in a second table written by the lanes, the running CRC of the
// open FPDU when a segment ended inside it. Until that CRC is back (about
// ten clocks) no segment of that connection starts: a stream that splits
// FPDUs across segments pays that bubble per segment, unless the next
// segment is of the same connection and right behind (s_cont): the walk
// then goes on into it ("Segments of one connection back to back", below).
// Another connection's segment starts as the cut is made.
//
// Lane outputs, one beat of the run each (l_* fields, lane i in the i-th
// slice): the beat's data; crc_lo/crc_hi, the words the CRC covers;
// crcw, the word holding the received CRC (fpdu_end only); ulp_lo/ulp_hi,
// the ULPDU octets; run_first/run_last; resume (the run continues an FPDU
// begun in an earlier segment: the CRC resumes from state); fpdu_first (the
// run begins with the ULPDU's first octet), fpdu_end (the run ends the
// FPDU); conn, crc_en; ulen, the ULPDU_Length (fpdu_first runs only);
// mkbad, lenbad (final on fpdu_end); vseq, the number of the FPDU end
// (fpdu_end only), counting in walker order, so that the lanes' verdicts
// can be merged back into that order (their pieces are, through mpa_rx's
// ord_fifo).
//
// Depth: every pass starts from registers. Where the next ULPDU_Length
// is (hx_reg) is kept beside S and set as S changes, for the beat that
// comes next, not summed from S on the pass; what the pass needs of the
// word there is worked out in the precompute stage, per word, and picked
// by hx_reg; S and since step by a register less (or plus) a value below
// 2^HX, by halves; the table write, whose S is a 16-bit difference, is made
// a clock later from registers (wq_*). hx_reg's next value is a pick of
// values made from registers: after a pass, a per-word value of the
// precompute stage (p_w0, p_w1) or run A's; as a segment loads, the hx the
// table keeps beside S for the beat the connection's next segment starts
// with (its position is where the last one ended); and it is set whether or
// not a load happens wherever no pass reads it before it is set again, so
// that no load condition (the lookup's connection match, cfg, the CRCs in
// flight) is in its path. 5 LUT levels at W=512, alone and inside mpa_rx.
//
// Throughput: one beat a clock while each beat starts at most one FPDU
// (FPDUs of at least DATA_W/8 octets); a beat that starts k FPDUs takes k
// clocks; one idle clock between segments (the state loads). Latency: 2
// clocks (precompute and lookup, then the state loads) before the walk.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module mpa_rx_walk #(
    parameter DATA_W = 64,
    parameter CONN_W = 10
) (
    input  wire                    clk,
    input  wire                    rst,

    // configuration: a connection starts at an FPDU boundary
    input  wire                    cfg_valid,
    output wire                    cfg_ready,
    input  wire [CONN_W-1:0]       cfg_conn,

    // stream-aligned words from mpa_rx_align
    input  wire [DATA_W-1:0]       s_data,
    input  wire                    s_valid,
    output wire                    s_ready,
    input  wire [CONN_W-1:0]       s_conn,
    input  wire                    s_first,
    input  wire                    s_cont,     // (first beats) mpa_rx_align's m_cont
    input  wire                    s_last,
    input  wire [$clog2(DATA_W/32):0] s_wlo,
    input  wire [$clog2(DATA_W/32):0] s_whi,
    input  wire                    s_mk,       // word 0 is a marker (only when s_wlo = 0)
    input  wire                    s_crc_en,
    // the connection of the segment to come (mpa_rx_align's m_hint): its
    // table words are read ahead
    input  wire                    s_hint,
    input  wire [CONN_W-1:0]       s_hint_conn,

    // running CRC of a run that a segment end cut, from the lanes
    input  wire                    wb_valid,
    input  wire [CONN_W-1:0]       wb_conn,
    input  wire [31:0]             wb_state,

    // two lanes
    output reg  [1:0]              l_valid,
    input  wire [1:0]              l_ready,
    output reg  [2*DATA_W-1:0]     l_data,
    output reg  [2*($clog2(DATA_W/32)+1)-1:0] l_crc_lo,
    output reg  [2*($clog2(DATA_W/32)+1)-1:0] l_crc_hi,
    output reg  [2*$clog2(DATA_W/32)-1:0] l_crcw,
    output reg  [2*($clog2(DATA_W/8)+1)-1:0]  l_ulp_lo,
    output reg  [2*($clog2(DATA_W/8)+1)-1:0]  l_ulp_hi,
    output reg  [1:0]              l_run_first,
    output reg  [1:0]              l_run_last,
    output reg  [1:0]              l_resume,
    output reg  [1:0]              l_nopiece,
    output reg  [63:0]             l_state,
    output reg  [1:0]              l_fpdu_first,
    output reg  [1:0]              l_fpdu_end,
    output reg  [2*CONN_W-1:0]     l_conn,
    output reg  [31:0]             l_ulen,
    output reg  [1:0]              l_crc_en,
    output reg  [1:0]              l_mkbad,
    output reg  [1:0]              l_lenbad,
    output reg  [15:0]             l_vseq
);

localparam N = DATA_W / 8;
localparam LN = $clog2(N);
localparam WORDS = DATA_W / 32;
localparam WL = $clog2(WORDS) + 1;   // a word position 0 .. WORDS
localparam integer WORDS_I = WORDS;
localparam [WL-1:0] WORDS_WL = WORDS_I[WL-1:0];
localparam OL = LN + 1;              // an octet position 0 .. N
localparam ST_W = 16 + 16 + 2 + 1 + 1 + 1;
localparam [15:0] MAX_ULPDU = 16'd64768;

initial begin
    if (DATA_W != 64 && DATA_W != 128 && DATA_W != 256 && DATA_W != 512) begin
        $error("mpa_rx_walk: DATA_W must be 64, 128, 256 or 512, not %0d", DATA_W);
        $finish;
    end
end

// ---- precompute stage: per word, what it would mean as a ULPDU_Length ------

localparam HX = WL + 1;              // hx_reg: a word position 0 .. 4 WORDS - 1
localparam [HX-1:0] HX_FAR = {HX{1'b1}};
localparam integer FAR_I = WORDS_I + 1; // S above this: hx_reg is HX_FAR (at least whi + 2)
localparam [HX-1:0] FAR_HX = FAR_I[HX-1:0];

reg              p_valid;
reg [DATA_W-1:0] p_data;
reg [CONN_W-1:0] p_conn;
reg              p_first, p_last, p_mk, p_crc_en;
reg              p_full;     // p_whi == WORDS: the beat ends on a beat boundary
reg [WL-1:0]     p_wlo, p_whi;
reg [WL-1:0]     p_pos0;     // where the first pass starts: p_wlo, past the marker
reg [WL-1:0]     p_avail;    // p_whi - p_pos0: content words of the first pass
reg [HX-1:0]     p_avw;      // p_avail + WORDS + 1
reg [WL-1:0]     p_span;     // p_whi - p_wlo
reg [15*WORDS-1:0] p_t;      // content words from here through the CRC word
reg [WORDS-1:0]    p_lenbad;
reg [2*WORDS-1:0]  p_pad;
reg [16*WORDS-1:0] p_len;    // the word's first two octets as a ULPDU_Length
// Where an FPDU whose ULPDU_Length is word j of this beat ends, worked out
// here from its length and the beat's whi, so that the walk's pass only
// picks them by word: j is a word of the beat (p_lt: j < whi); the FPDU
// ends in the beat (p_be: T <= whi - j, i.e. len <= 4 (whi - j) - 6) or
// goes on past it (p_open); another FPDU starts behind it in the beat
// (p_more: T < whi - j, len <= 4 (whi - j) - 10); the word after its CRC
// (p_a: j + T mod 2^WL, meaningful when it ends in the beat, where
// len < 64) and the one before (p_am1); its ULPDU's end octet (p_uendl,
// mod 2^OL) and whether that is at or past the beat's end (p_ufar).
reg [WORDS-1:0]    p_lt, p_be, p_open, p_more, p_ufar;
reg [WL*WORDS-1:0] p_a, p_am1;
reg [OL*WORDS-1:0] p_uendl;
// And, for a full beat (whi = WORDS), the walk's state after it when the
// FPDU goes on past the beat: p_sn, its content words from the next beat
// on (T - (WORDS - j)), and p_hb0/p_hb1, the next beat's hx_reg when that
// beat has no marker / has one (p_sn, or p_sn + 1; HX_FAR when p_sn is
// over WORDS + 1).
reg [16*WORDS-1:0] p_sn;
reg [HX*WORDS-1:0] p_hb0, p_hb1;
// And what a pass whose next ULPDU_Length is word j leaves in hx_reg when
// no FPDU goes on into the beat (run A does not continue past it): the word
// after its FPDU when another starts behind it in the beat (p_more), the
// next beat's hx when it goes on past the beat (p_open), else the next
// beat's first word; for a next beat without a marker (p_w0) and with one
// (p_w1).
reg [HX*WORDS-1:0] p_w0, p_w1;

wire p_take;               // the walker consumes the precomputed beat
wire p_free = !p_valid || p_take;
wire merge_now;
wire p_ld = !merge_now && p_free && s_valid;   // a beat enters p_* (not merged)
// A segment's last beat not yet walked takes in the first beat of the
// next segment of its connection when that shares its stream beat (the
// next one's first word is this one's whi): see "Segments of one
// connection back to back" below.
assign s_ready = p_free || merge_now;

// The beat at s_*: where its first pass starts (a marker is word 0, and
// s_mk is high only on a beat with s_wlo = 0: mpa_rx_align's m_mk).
wire          mk_in = s_mk;
wire [WL-1:0] pos0_in = s_wlo | {{(WL-1){1'b0}}, mk_in};

genvar g;
generate
    for (g = 0; g < WORDS; g = g + 1) begin : pre
        localparam [18:0] AT = 4 * g + 2;
        localparam [8:0] G4P6 = 4 * g + 6;
        localparam [8:0] G4P10 = 4 * g + 10;
        localparam [8:0] G4P2 = 4 * g + 2;
        localparam [WL-1:0] GW = g;
        localparam integer KI = g + 2 - WORDS_I;          // T - (WORDS - j) = len / 4 + KI (+ 1)
        localparam [15:0] K16 = KI[15:0];
        localparam integer C2I = 2 * WORDS_I + 1 - g - 2;  // p_sn > WORDS + 1: len / 4 > C2I (- 1)
        localparam integer C3I = C2I - 1;
        localparam [13:0] C2 = C2I[13:0];
        localparam [13:0] C3 = C3I[13:0];
        wire [15:0] len = {s_data[32*g +: 8], s_data[32*g + 8 +: 8]};
        wire [8:0]  lim_e = {{(7-WL){1'b0}}, s_whi, 2'b00} - G4P6;    // signed
        wire [8:0]  lim_m = {{(7-WL){1'b0}}, s_whi, 2'b00} - G4P10;
        wire [8:0]  lim_u = {{(7-WL){1'b0}}, s_whi, 2'b00} - G4P2;
        wire        len_lt64 = len[15:6] == 10'd0;
        wire [6:0]  t_small = ({1'b0, len[5:0]} + 7'd9) >> 2;
        wire        unused_t = &{1'b0, t_small[6:WL]};
        wire        c3 = len[1:0] == 2'b11;
        // (By halves: the low 6 bits with K's and the carry in, the high
        // ones plus K's sign and that carry: len's, one less or one more.)
        wire [6:0]  sn_lo = {1'b0, len[7:2]} + {1'b0, K16[5:0]} + {6'd0, c3};
        wire [9:0]  len_hi_p1, len_hi_m1;
        rnic_incdec #(.W(10), .DEC(0)) sn_inc (.x({2'b00, len[15:8]}), .y(len_hi_p1));
        rnic_incdec #(.W(10), .DEC(1)) sn_dec (.x({2'b00, len[15:8]}), .y(len_hi_m1));
        wire [9:0]  sn_hi = K16[15] ? (sn_lo[6] ? {2'b00, len[15:8]} : len_hi_m1)
                                    : (sn_lo[6] ? len_hi_p1 : {2'b00, len[15:8]});
        wire [15:0] sn = {sn_hi, sn_lo[5:0]};
        wire        snfar = len[15:2] > (c3 ? C3 : C2);
        wire [HX-1:0] sn1 = sn[HX-1:0] + {{(HX-1){1'b0}}, 1'b1};
        wire        lt = GW < s_whi;
        wire        e = len_lt64 && !lim_e[8] && {3'b000, len[5:0]} <= lim_e;
        wire        m = len_lt64 && !lim_m[8] && {3'b000, len[5:0]} <= lim_m;
        wire        uf = lim_u[8] || {3'b000, len} >= {11'd0, lim_u[7:0]};
        // (a word of the beat a merge keeps: its FPDU's end against the
        // merged beat's whi)
        wire [15:0] plen = p_len[16*g +: 16];
        wire        keep_w = GW < p_whi;
        wire        pe = plen[15:6] == 10'd0 && !lim_e[8] && {3'b000, plen[5:0]} <= lim_e;
        wire        pm = plen[15:6] == 10'd0 && !lim_m[8] && {3'b000, plen[5:0]} <= lim_m;
        wire        pu = lim_u[8] || {3'b000, plen} >= {11'd0, lim_u[7:0]};
        wire [WL-1:0] wa = GW + t_small[WL-1:0];
        always @(posedge clk) begin
            if (merge_now && keep_w) begin
                p_lt[g] <= 1'b1;
                p_be[g] <= pe;
                p_open[g] <= !pe;
                p_more[g] <= pm;
                p_ufar[g] <= pu;
                p_w0[HX*g +: HX] <= pm ? {1'b0, p_a[WL*g +: WL]} : !pe ? p_hb0[HX*g +: HX] : {HX{1'b0}};
                p_w1[HX*g +: HX] <= pm ? {1'b0, p_a[WL*g +: WL]} : !pe ? p_hb1[HX*g +: HX] : {{(HX-1){1'b0}}, 1'b1};
            end else if ((p_free || merge_now) && s_valid) begin
                // Content words from the ULPDU_Length word through the CRC
                // word: (2 + len + pad) / 4 + 1 = floor((len + 9) / 4).
                p_t[15*g +: 15] <= {1'b0, len[15:2]} + (c3 ? 15'd3 : 15'd2);
                p_lenbad[g] <= len > MAX_ULPDU;
                p_pad[2*g +: 2] <= 2'd2 - len[1:0];
                p_len[16*g +: 16] <= len;
                p_lt[g] <= lt;
                p_be[g] <= lt && e;
                p_open[g] <= lt && !e;
                p_more[g] <= lt && m;
                p_ufar[g] <= uf;
                p_uendl[OL*g +: OL] <= AT[OL-1:0] + len[OL-1:0];
                p_a[WL*g +: WL] <= wa;
                p_am1[WL*g +: WL] <= GW + t_small[WL-1:0] - {{(WL-1){1'b0}}, 1'b1};
                p_sn[16*g +: 16] <= sn;
                p_hb0[HX*g +: HX] <= snfar ? HX_FAR : sn[HX-1:0];
                p_hb1[HX*g +: HX] <= snfar ? HX_FAR : sn1;
                p_w0[HX*g +: HX] <= (lt && m) ? {1'b0, wa} : (lt && !e) ? (snfar ? HX_FAR : sn[HX-1:0]) : {HX{1'b0}};
                p_w1[HX*g +: HX] <= (lt && m) ? {1'b0, wa} : (lt && !e) ? (snfar ? HX_FAR : sn1) : {{(HX-1){1'b0}}, 1'b1};
            end
        end
    end
endgenerate

integer mw;
always @(posedge clk) begin
    if (p_take) begin
        p_valid <= 1'b0;
    end
    if (merge_now) begin
        for (mw = 0; mw < WORDS; mw = mw + 1) begin
            if (mw >= p_whi) begin
                p_data[32*mw +: 32] <= s_data[32*mw +: 32];
            end
        end
        p_last <= s_last;
        p_whi <= s_whi;
        p_full <= s_whi == WORDS_WL;
        p_avail <= s_whi - p_pos0;
        p_avw <= {1'b0, s_whi - p_pos0} + FAR_HX;
        p_span <= s_whi - p_wlo;
    end else if (p_ld) begin
        p_valid <= 1'b1;
        p_data <= s_data;
        p_conn <= s_conn;
        p_first <= s_first;
        p_last <= s_last;
        p_mk <= mk_in;
        p_crc_en <= s_crc_en;
        p_wlo <= s_wlo;
        p_whi <= s_whi;
        p_full <= s_whi == WORDS_WL;
        p_pos0 <= pos0_in;
        p_avail <= s_whi - pos0_in;
        p_avw <= {1'b0, s_whi - pos0_in} + FAR_HX;
        p_span <= s_whi - s_wlo;
    end
    if (rst) begin
        p_valid <= 1'b0;
    end
end

// ---- per-connection tables -------------------------------------------------------
// st: {hx1, hx0, S[15:0], since[15:0], pad[1:0], mkbad, lenbad, lead}
// (hx0/hx1: see st_wr_hx)

// A segment's state loads at the edge its first beat enters the precompute
// stage when its words were read at an earlier edge (s_hint) and the walk
// is idle or ends the segment before at that edge (without cutting an
// FPDU when it is of the same connection: the word it writes then) and no
// cut run's CRC was on its way back; otherwise in W_IDLE, a clock later, once no CRC of
// its own connection is on its way back and at most one of another's.
// Either waits while a cfg waits. (Two cut CRCs in flight at most: the
// lanes return them through mpa_rx's two-entry queue, one a clock.)
localparam [1:0] W_IDLE = 2'd0, W_RUN = 2'd2;
(* fsm_encoding = "none" *) reg [1:0] wstate_reg;
reg [1:0]        pend_v;   // cut runs' CRCs on their way back: slot valid
reg [CONN_W-1:0] pend_c0, pend_c1;  // and their connections
wire pend_any = pend_v != 2'b00;
reg       mrg_en_reg = 1'b1; // the latest segment end left an FPDU open
reg              lk_valid;
reg [CONN_W-1:0] lk_conn;  // whose words st_rd and crc_rd (and the patch) hold

wire look = p_free && s_valid && s_first;    // its first beat enters
// The tables are read for a first beat on s_* (every clock it waits
// there, so that its words are read when it enters), else for a hint;
// not while a first beat waits in W_IDLE for the words it read. (From
// s_* and registers alone: no read hangs on the walk's handshake.)
wire sel_s = s_valid && s_first;
wire rd_en = (sel_s || s_hint) && !(wstate_reg == W_IDLE && p_valid && p_first);
wire [CONN_W-1:0] rd_addr = sel_s ? s_conn : s_hint_conn;
wire p_blocked = (pend_v[0] && pend_c0 == p_conn) || (pend_v[1] && pend_c1 == p_conn) || pend_v == 2'b11;
wire idle_ok = wstate_reg == W_IDLE && !p_blocked && !cfg_valid;
wire lk_ok = lk_valid && lk_conn == s_conn && !pend_any && !cfg_valid;
wire lk_hit = look && lk_ok;
wire load_in = lk_hit && wstate_reg == W_IDLE;
wire load_run;             // lk_hit as the walk ends a segment (below)
wire load = idle_ok && p_valid && p_first;
wire [ST_W-1:0] st_rd;
wire [31:0]     crc_rd;
wire            st_wr_en;
wire [CONN_W-1:0] st_wr_addr;
wire [ST_W-1:0] st_wr_data;

// Beside each word, the hx_reg its segment's next beat starts with
// (st_*_hx: hx_of(pos, S) for the word the beat starts at, pos, without a
// marker in front of it and with one), worked out as the word is written:
// the connection's next segment goes on where this one ended, at the
// ending beat's whi (or word 0 of the next beat, or 1 past its marker,
// when that is WORDS). So a load's hx_reg is a pick from registers.
wire [2*HX-1:0] st_rd_hx;
wire [2*HX-1:0] st_wr_hx;
sdp_ram #(.WIDTH(ST_W + 2 * HX), .ADDR_W(CONN_W)) st_ram (
    .clk(clk),
    .wr_en(st_wr_en), .wr_addr(st_wr_addr), .wr_data({st_wr_hx, st_wr_data}),
    .rd_en(rd_en), .rd_addr(rd_addr), .rd_data({st_rd_hx, st_rd})
);

sdp_ram #(.WIDTH(32), .ADDR_W(CONN_W)) crc_ram (
    .clk(clk),
    .wr_en(wb_valid), .wr_addr(wb_conn), .wr_data(wb_state),
    .rd_en(rd_en), .rd_addr(rd_addr), .rd_data(crc_rd)
);

// The patch: the newest write to the looked-up connection since its read.
reg              st_pv, crc_pv;
reg [ST_W-1:0]   st_patch;
reg [2*HX-1:0]   st_patch_hx;
reg [31:0]       crc_patch;
// (Compared with every candidate, then chosen.)
wire st_pt  = !rd_en ? st_wr_addr == lk_conn : sel_s ? st_wr_addr == s_conn : st_wr_addr == s_hint_conn;
wire crc_pt = !rd_en ? wb_conn == lk_conn : sel_s ? wb_conn == s_conn : wb_conn == s_hint_conn;
// lkp_reg: lk_conn == p_conn, kept as a register beside the two (p_conn
// loads as a beat enters the precompute stage, below).
reg  lkp_reg;
wire lk_eq_s = rd_en ? (sel_s || s_hint_conn == s_conn) : lk_conn == s_conn;
wire lk_eq_p = rd_en ? (sel_s ? s_conn == p_conn : s_hint_conn == p_conn) : lkp_reg;
always @(posedge clk) begin
    lkp_reg <= p_ld ? lk_eq_s : lk_eq_p;
    if (rd_en) begin
        st_pv <= 1'b0;
        crc_pv <= 1'b0;
        lk_conn <= rd_addr;
        lk_valid <= 1'b1;
    end
    if (rst) begin
        lk_valid <= 1'b0;
    end
    if (st_wr_en && st_pt) begin
        st_pv <= 1'b1;
        st_patch <= st_wr_data;
        st_patch_hx <= st_wr_hx;
    end
    if (wb_valid && crc_pt) begin
        crc_pv <= 1'b1;
        crc_patch <= wb_state;
    end
end

// The table write is made a clock after the segment end (or cfg) it saves
// (wq_*, below), so that its S, a 16-bit difference, is worked out from
// registers. A load on the clock in between of the connection it writes
// takes the word from wq_* (wq_hit): that happens only when the segment
// end left no FPDU open (one that did keeps its connection from loading
// until the running CRC is back, pend_v), so its S is 0.
reg              wq_v;
reg [CONN_W-1:0] wq_addr;
reg              wq_sz;        // S is 0
reg [15:0]       wq_x;         // else S = wq_x - wq_y
reg [WL-1:0]     wq_y;
reg [ST_W-17:0]  wq_rest;      // {since, pad, mkbad, lenbad, lead}
reg [WL-1:0]     wq_p0, wq_p1;  // where the next segment's first pass starts (no marker, marker)
wire [15:0]      wq_s = wq_x - {{(16-WL){1'b0}}, wq_y};
assign st_wr_en = wq_v;
assign st_wr_addr = wq_addr;
assign st_wr_data = {wq_sz ? 16'd0 : wq_s, wq_rest};
// S > FAR_HX: wq_x > wq_y + FAR_HX (under 2^HX); else pos + S mod 2^HX.
wire [HX-1:0]    wq_yf = {{(HX-WL){1'b0}}, wq_y} + FAR_HX;
wire             wq_far = !wq_sz && (wq_x[15:HX] != {(16-HX){1'b0}} || wq_x[HX-1:0] > wq_yf);
wire [HX-1:0]    wq_sl = wq_sz ? {HX{1'b0}} : wq_x[HX-1:0] - {{(HX-WL){1'b0}}, wq_y};
assign st_wr_hx = {wq_far ? HX_FAR : {1'b0, wq_p1} + wq_sl, wq_far ? HX_FAR : {1'b0, wq_p0} + wq_sl};
wire wq_hit = wq_v && wq_addr == lk_conn;
wire [ST_W-1:0] st_now = wq_hit ? {16'd0, wq_rest} : st_pv ? st_patch : st_rd;
wire [31:0]     crc_now = crc_pv ? crc_patch : crc_rd;

assign cfg_ready = wstate_reg == W_IDLE;

// ---- the walk ----------------------------------------------------------------------

reg [15:0]  s_reg;        // content words from the pass's start to the next ULPDU_Length
reg         anz_reg;      // s_reg != 0 (first passes only: 0 on later ones)
// Where the next ULPDU_Length is, as a word of the beat: p_pos0 + s_reg on
// a first pass (HX_FAR when s_reg > WORDS + 1), the word after the FPDU
// before on a later one. Kept as a register beside s_reg, set as the beat
// it is for enters the precompute stage or s_reg changes, so that a pass
// starts from it and not from a sum.
reg [HX-1:0] hx_reg;
reg [15:0]  since_reg;    // words from the open FPDU's ULPDU_Length to this beat
reg [1:0]   pad_reg;
reg         mkbad_reg, lenbad_reg;
reg         lead_reg;     // the next FPDU's leading marker is in state_reg
reg         run_open_reg; // the open FPDU has a run in this segment
reg         gl_reg;       // lane of the latest run
reg         first_pass_reg;
reg [31:0]  state_reg;    // running CRC of the open FPDU, for a resumed run
reg [7:0]   vseq_reg;

wire out_free = (!l_valid[0] || l_ready[0]) && (!l_valid[1] || l_ready[1]);
wire step = wstate_reg == W_RUN && p_valid && out_free && !merge_now;

// Segments of one connection back to back. mpa_rx_align passes only a
// segment that continues its connection's stream where the one before
// ended, so when the next segment's first beat is at s_* as a segment's
// last is walked and both are of one connection, the walk goes on into it:
// nothing is saved, no run is cut, and no running CRC has to come back
// through the table before the next segment starts. When the two share a
// stream beat (the segment ends inside a beat), the last beat first takes
// the next one's words in (merge_now, a clock in which it is not walked:
// crc32c takes null octets only at a run's start and end, so a run never
// has a beat with words missing in front); when the segment ends on a beat
// boundary, its last beat is walked as it is (cont).
// (From registers alone: s_cont says the beat at s_* continues the last
// one mpa_rx_align handed on, the one in p_*.)
wire nxt_same = s_valid && s_first && s_cont;
// Merging costs a clock in which nothing is walked, and when FPDUs end
// where segments do (FPDU Alignment, RFC 5044 section 2) a lane then waits
// on it for nothing; so a merge is tried only after a segment end that
// left an FPDU open (mrg_en_reg), the sign of a stream whose FPDUs cross
// segments.
assign merge_now = mrg_en_reg && p_valid && p_last && nxt_same && !p_full
                   && (wstate_reg == W_RUN ? first_pass_reg : p_first);

// The pass. Run A is the open FPDU's, from the pass's start (a first pass
// only: s_reg is 0 on later ones); run B the FPDU whose ULPDU_Length is at
// h. Each is picked from the precompute stage's words by hx_reg, compared
// with whi, or from registers.
wire          mk_here = first_pass_reg && p_mk;
wire          a_present = anz_reg;
wire          a_cont = a_present && hx_reg > {1'b0, p_whi};
wire          a_end = a_present && !a_cont;
wire          hx_in = hx_reg[HX-1:WL-1] == 2'b00;   // a word of the beat
wire [WL-2:0] hi = hx_reg[WL-2:0];
wire [WL-1:0] h = hx_reg[WL-1:0];                 // next ULPDU_Length word
wire          b_present = hx_in && p_lt[hi];
wire          b_end = hx_in && p_be[hi];
wire          b_open = hx_in && p_open[hi];
wire          more = hx_in && p_more[hi];
// A segment that ends right after a marker in front of an FPDU: the marker
// is the FPDU's first word (RFC 5044 4.3) and goes into its CRC now, in a
// run of its own that makes no ULPDU piece; the FPDU's run in the next
// segment resumes from that CRC.
wire          m_only = mk_here && !a_present && p_whi == {{(WL-1){1'b0}}, 1'b1};
wire [14:0]   t_h = p_t[15*hi +: 15];
wire [WL-1:0] room = p_whi - h;

// The marker: whose is it, and does it point where it must?
// FPDUPTR is octets 2 and 3 of the marker, big-endian; its low two bits
// are ignored, so the words in it are {octet 2, octet 3[7:2]}.
wire [13:0] mk_words = {p_data[23:16], p_data[31:26]};
wire        mk_bad_open = mk_words != since_reg[13:0] || since_reg[15:14] != 2'b00;
wire        mk_bad_new = mk_words != 14'd0;
wire        a_mkbad = mkbad_reg || (mk_here && mk_bad_open);
wire        b_mkbad = (mk_here && !a_present && mk_bad_new) || (lead_reg && mkbad_reg);

// Lanes: a run that starts takes the lane after the latest one.
wire a_new = !run_open_reg;
wire la = a_new ? !gl_reg : gl_reg;
wire lb = a_present ? !la : !gl_reg;

// Run A: the open FPDU, from p_pos0 (its marker included).
wire [WL-1:0] a_crc_lo = p_wlo;
wire [WL-1:0] a_crcw = h - {{(WL-1){1'b0}}, 1'b1};
wire [WL-1:0] a_crc_hi = a_end ? a_crcw : p_whi;
wire [OL-1:0] a_ulp_lo = {p_pos0, 2'b00};
// Its ULPDU ends 4 (S - 1) - pad octets past p_pos0, 4 (hx - 1) - pad into
// the beat: at or past the beat's end when hx >= whi + 2, or hx = whi + 1
// and no pad (HX_FAR: S > WORDS + 1, hx past whi + 1).
wire [OL-1:0] a_uend = {a_crcw, 2'b00} - {{(OL-2){1'b0}}, pad_reg};
wire          a_hw1 = hx_reg == {1'b0, p_whi} + {{(HX-1){1'b0}}, 1'b1};
wire          a_ufar = (a_cont && !a_hw1) || (a_hw1 && pad_reg == 2'b00);
wire [OL-1:0] a_ulp_hi = (s_reg[15:1] == 15'd0) ? a_ulp_lo : a_ufar ? {p_whi, 2'b00} : a_uend;

// Run B: the FPDU whose ULPDU_Length is at h.
wire          b_lead = mk_here && !a_present;   // its marker is word 0
wire [WL-1:0] b_crc_lo = b_lead ? p_wlo : h;
wire [WL-1:0] b_crcw = p_am1[WL*hi +: WL];
wire [WL-1:0] b_crc_hi = b_end ? b_crcw : p_whi;
wire [OL-1:0] b_ulp_lo = {h, 2'b10};
wire [OL-1:0] b_ulp_hi = p_ufar[hi] ? {p_whi, 2'b00} : p_uendl[OL*hi +: OL];
wire          b_lenbad = p_lenbad[hi];
wire [1:0]    b_pad = p_pad[2*hi +: 2];

// After the pass.
wire          done = !more;
wire          open_after = a_cont || b_open || m_only;
wire          cont = p_last && nxt_same && p_full;
wire          seg_end = done && p_last && !cont;
wire          cut = p_last && !cont;        // the segment's end ends its runs

// The next S and since when the walk goes on into the next beat (a full
// beat: whi = WORDS), each a register less a value below 2^HX, by halves:
// the low HX bits, and the high ones or the high ones less one.
wire [HX:0]    sa_lo = {1'b0, s_reg[HX-1:0]} - {2'b00, p_avail};
wire [15-HX:0] s_hi_m1;
rnic_incdec #(.W(16-HX), .DEC(1)) s_dec (.x(s_reg[15:HX]), .y(s_hi_m1));
wire [15:0]    s_a = {sa_lo[HX] ? s_hi_m1 : s_reg[15:HX], sa_lo[HX-1:0]};
wire [HX:0]    si_lo = {1'b0, since_reg[HX-1:0]} + {2'b00, p_span};
wire [15-HX:0] si_hi_p1;
rnic_incdec #(.W(16-HX), .DEC(0)) si_inc (.x(since_reg[15:HX]), .y(si_hi_p1));
wire [15:0]    since_a = {si_lo[HX] ? si_hi_p1 : since_reg[15:HX], si_lo[HX-1:0]};
wire [15:0]    since_next = a_cont ? since_a : {{(16-WL){1'b0}}, room};
wire [15:0]    s_next = a_cont ? s_a : b_open ? p_sn[16*hi +: 16] : 16'd0;
// hx_reg for the next beat, whose first pass starts at mk_in: s_next +
// mk_in, or HX_FAR.
wire           a_far = s_reg[15:HX] != {(16-HX){1'b0}} || s_reg[HX-1:0] > p_avw;
wire [HX-1:0]  ha0 = sa_lo[HX-1:0];
wire [HX-1:0]  ha1 = s_reg[HX-1:0] - {1'b0, p_avail} + {{(HX-1){1'b0}}, 1'b1};
wire [HX-1:0]  hx_a = a_far ? HX_FAR : mk_in ? ha1 : ha0;
// hx_reg after a pass, whether or not it is the beat's last (done): run A
// goes on past the beat (hx_a), or the pass's word's p_w0/p_w1, or the
// next beat's first word when the pass has no next ULPDU_Length in the
// beat.
// (p_w0[hi] and p_w1[hi] bit by bit through rnic_pick, kept apart, so that
// mk_in, which comes last, picks between two registers' picks)
wire [HX-1:0]  hx_w0, hx_w1;
genvar hb, hw;
generate
    for (hb = 0; hb < HX; hb = hb + 1) begin : hxw
        wire [WORDS-1:0] c0, c1;
        for (hw = 0; hw < WORDS; hw = hw + 1) begin : word
            assign c0[hw] = p_w0[HX*hw + hb];
            assign c1[hw] = p_w1[HX*hw + hb];
        end
        rnic_pick #(.AW(WL-1)) pk0 (.v(c0), .a(hi), .y(hx_w0[hb]));
        rnic_pick #(.AW(WL-1)) pk1 (.v(c1), .a(hi), .y(hx_w1[hb]));
    end
endgenerate
wire [HX-1:0]  hx_w = mk_in ? hx_w1 : hx_w0;
wire [HX-1:0]  hx_pass = a_cont ? hx_a : hx_in ? hx_w : {{(HX-1){1'b0}}, mk_in};

// hx_reg for a segment's state as it loads: for the beat in p_* (hx_ld_p)
// or at s_* (hx_ld_s), the hx the word st_now picks keeps for it (S is 0
// in wq_*'s: hx is where the beat starts).
wire [2*HX-1:0] ld_hx = st_pv ? st_patch_hx : st_rd_hx;
wire [HX-1:0] hx_ld_p = wq_hit ? {1'b0, p_pos0} : p_mk ? ld_hx[HX +: HX] : ld_hx[HX-1:0];
wire [HX-1:0] hx_ld_s = wq_hit ? {1'b0, pos0_in} : mk_in ? ld_hx[HX +: HX] : ld_hx[HX-1:0];

// hx_reg for a beat that starts at pos, S words from the next ULPDU_Length.
function [HX-1:0] hx_of;
    input [WL-1:0] pos;
    input [15:0]   s;
    begin
        hx_of = (s[15:HX] != {(16-HX){1'b0}} || s[HX-1:0] > FAR_HX) ? HX_FAR
                : {1'b0, pos} + s[HX-1:0];
    end
endfunction

// hx_reg's next value. It is read only by the walk's passes (step: W_RUN
// with a beat in p_*), and every entry into W_RUN sets it, so it is left
// to whatever the next-state logic makes where no pass can read it before
// it is set again: in W_IDLE it is what a load would set (p_* or s_*,
// whether or not a load happens), with no beat in p_* what a beat coming
// in would set (whether or not one comes), and at a pass that ends a
// segment what ld_run would set (whether or not it happens). That keeps
// the loads' conditions (the lookup's connection match, cfg, the CRCs in
// flight) out of it.
// (With no beat in p_*, the walk is inside a segment, so the beat to come
// starts at word 0, or 1 past a marker.)
wire [HX-1:0] hx_c = mk_in ? hx_of({{(WL-1){1'b0}}, 1'b1}, s_reg) : hx_of({WL{1'b0}}, s_reg);
wire [HX-1:0] hx_next =
    wstate_reg == W_IDLE ? (p_valid && p_first ? hx_ld_p : hx_ld_s) :
    !p_valid             ? hx_c :
    !step                ? hx_reg :
    seg_end              ? (lkp_reg ? {1'b0, pos0_in} : hx_ld_s) : hx_pass;

// The word a load as the walk ends a segment takes: this segment's, for
// the same connection (the end leaves no FPDU open then, so S is 0).
wire [ST_W-1:0] st_fw = {16'd0, {{(16-WL){1'b0}}, room}, b_pad, b_mkbad, b_lenbad, 1'b0};
wire [ST_W-1:0] st_run = lkp_reg ? st_fw : st_now;
// (step && seg_end takes the beat in p_*, so look is sel_s then. Its
// registers load with it whenever the segment ends: when it ends with an
// FPDU open, the walk goes idle and loads them again.)
wire ld_run = sel_s && lk_ok && step && seg_end;
assign load_run = ld_run && (!open_after || lk_conn != p_conn);

assign p_take = (step && done) || (wstate_reg == W_IDLE && p_valid && !p_first);

// Writes: a segment's end saves the walk; cfg starts a connection afresh
// (the two never coincide: cfg_ready is high only in W_IDLE).
wire cfg_fire = cfg_valid && cfg_ready;
always @(posedge clk) begin
    wq_v <= cfg_fire || (step && seg_end);
    wq_addr <= cfg_fire ? cfg_conn : p_conn;
    wq_sz <= cfg_fire || !(a_cont || b_open);
    wq_x <= a_cont ? s_reg : {1'b0, t_h};
    wq_y <= a_cont ? p_avail : room;
    wq_p0 <= (cfg_fire || p_full) ? {WL{1'b0}} : p_whi;
    wq_p1 <= (cfg_fire || p_full) ? {{(WL-1){1'b0}}, 1'b1} : p_whi;
    wq_rest <= cfg_fire ? {(ST_W-16){1'b0}} :
        {since_next,
         a_cont ? pad_reg : b_pad,
         a_cont ? a_mkbad : b_mkbad,
         a_cont ? lenbad_reg : b_lenbad,
         m_only};
    if (rst) begin
        wq_v <= 1'b0;
    end
end

wire [7:0] vseq_p1 = vseq_reg + 8'd1;
wire [7:0] vseq_p2 = vseq_reg + 8'd2;

integer i;
always @(posedge clk) begin
    for (i = 0; i < 2; i = i + 1) begin
        if (l_ready[i]) begin
            l_valid[i] <= 1'b0;
        end
    end
    if (wb_valid) begin
        if (pend_v[0] && pend_c0 == wb_conn) begin
            pend_v[0] <= 1'b0;
        end else if (pend_v[1] && pend_c1 == wb_conn) begin
            pend_v[1] <= 1'b0;
        end
    end
    hx_reg <= hx_next;

    case (wstate_reg)
    W_IDLE: if (load || load_in) begin
        {s_reg, since_reg, pad_reg, mkbad_reg, lenbad_reg, lead_reg} <= st_now;
        anz_reg <= st_now[ST_W-1 -: 16] != 16'd0;
        state_reg <= crc_now;
        run_open_reg <= 1'b0;
        first_pass_reg <= 1'b1;
        wstate_reg <= W_RUN;
    end
    W_RUN: begin
        if (step) begin
            // Run A to lane la.
            if (a_present) begin
                l_valid[la] <= 1'b1;
                l_data[DATA_W*la +: DATA_W] <= p_data;
                l_crc_lo[WL*la +: WL] <= a_crc_lo;
                l_crc_hi[WL*la +: WL] <= a_crc_hi;
                l_crcw[(WL-1)*la +: WL-1] <= a_crcw[WL-2:0];
                l_ulp_lo[OL*la +: OL] <= a_ulp_lo;
                l_ulp_hi[OL*la +: OL] <= a_ulp_hi;
                l_run_first[la] <= a_new;
                l_run_last[la] <= a_end || cut;
                l_resume[la] <= a_new;
                l_state[32*la +: 32] <= state_reg;
                l_nopiece[la] <= 1'b0;
                l_fpdu_first[la] <= 1'b0;
                l_ulen[16*la +: 16] <= 16'd0;
                l_fpdu_end[la] <= a_end;
                l_conn[CONN_W*la +: CONN_W] <= p_conn;
                l_crc_en[la] <= p_crc_en;
                l_mkbad[la] <= a_mkbad;
                l_lenbad[la] <= lenbad_reg;
                l_vseq[8*la +: 8] <= vseq_reg;
            end
            // Run B to lane lb.
            if (b_present) begin
                l_valid[lb] <= 1'b1;
                l_data[DATA_W*lb +: DATA_W] <= p_data;
                l_crc_lo[WL*lb +: WL] <= b_crc_lo;
                l_crc_hi[WL*lb +: WL] <= b_crc_hi;
                l_crcw[(WL-1)*lb +: WL-1] <= b_crcw[WL-2:0];
                l_ulp_lo[OL*lb +: OL] <= b_ulp_lo;
                l_ulp_hi[OL*lb +: OL] <= b_ulp_hi;
                l_run_first[lb] <= 1'b1;
                l_run_last[lb] <= b_end || cut;
                l_resume[lb] <= lead_reg;
                l_state[32*lb +: 32] <= state_reg;
                l_nopiece[lb] <= 1'b0;
                l_fpdu_first[lb] <= 1'b1;
                l_ulen[16*lb +: 16] <= p_len[16*hi +: 16];
                l_fpdu_end[lb] <= b_end;
                l_conn[CONN_W*lb +: CONN_W] <= p_conn;
                l_crc_en[lb] <= p_crc_en;
                l_mkbad[lb] <= b_mkbad;
                l_lenbad[lb] <= b_lenbad;
                l_vseq[8*lb +: 8] <= a_end ? vseq_p1 : vseq_reg;
            end
            // The marker alone, to lane lb.
            if (m_only) begin
                l_valid[lb] <= 1'b1;
                l_data[DATA_W*lb +: DATA_W] <= p_data;
                l_crc_lo[WL*lb +: WL] <= {WL{1'b0}};
                l_crc_hi[WL*lb +: WL] <= {{(WL-1){1'b0}}, 1'b1};
                l_ulp_lo[OL*lb +: OL] <= {OL{1'b0}};
                l_ulp_hi[OL*lb +: OL] <= {OL{1'b0}};
                l_run_first[lb] <= 1'b1;
                l_run_last[lb] <= 1'b1;
                l_resume[lb] <= 1'b0;
                l_nopiece[lb] <= 1'b1;
                l_fpdu_first[lb] <= 1'b0;
                l_fpdu_end[lb] <= 1'b0;
                l_conn[CONN_W*lb +: CONN_W] <= p_conn;
                l_crc_en[lb] <= p_crc_en;
                l_mkbad[lb] <= b_mkbad;
                l_lenbad[lb] <= 1'b0;
                gl_reg <= lb;
                mkbad_reg <= b_mkbad;
            end
            if (a_end) begin
                vseq_reg <= b_end ? vseq_p2 : vseq_p1;
            end else if (b_end) begin
                vseq_reg <= vseq_p1;
            end
            if (a_present && a_new) begin
                gl_reg <= la;
            end
            if (b_present) begin
                gl_reg <= lb;
                lead_reg <= 1'b0;
                pad_reg <= b_pad;
                mkbad_reg <= b_mkbad;
                lenbad_reg <= b_lenbad;
            end else if (a_present) begin
                mkbad_reg <= a_mkbad;
            end
            run_open_reg <= open_after;
            if (done) begin
                s_reg <= s_next;
                anz_reg <= a_cont || b_open;
            end else begin
                s_reg <= 16'd0;
                anz_reg <= 1'b0;
            end
            since_reg <= since_next;
            first_pass_reg <= done;
            if (done && p_last) begin
                mrg_en_reg <= open_after;
            end
            if (seg_end) begin
                wstate_reg <= W_IDLE;
                if (open_after) begin
                    if (!pend_v[0]) begin
                        pend_v[0] <= 1'b1;
                        pend_c0 <= p_conn;
                    end else begin
                        pend_v[1] <= 1'b1;
                        pend_c1 <= p_conn;
                    end
                end
            end
        end
    end
    // verilator coverage_off
    // Unreachable: wstate_reg only ever holds W_IDLE or W_RUN; the arm
    // returns an upset register to W_IDLE.
    default: wstate_reg <= W_IDLE;
    // verilator coverage_on
    endcase

    // The next segment's state as this one ends (after the case: it wins).
    if (ld_run) begin
        {s_reg, since_reg, pad_reg, mkbad_reg, lenbad_reg, lead_reg} <= st_run;
        anz_reg <= st_run[ST_W-1 -: 16] != 16'd0;
        state_reg <= crc_now;
        run_open_reg <= 1'b0;
        first_pass_reg <= 1'b1;
    end
    if (load_run) begin
        wstate_reg <= W_RUN;
    end

    if (rst) begin
        wstate_reg <= W_IDLE;
        l_valid <= 2'b00;
        pend_v <= 2'b00;
        mrg_en_reg <= 1'b1;
        gl_reg <= 1'b0;
        vseq_reg <= 8'd0;
    end
end

endmodule

`resetall
