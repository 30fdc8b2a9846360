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
// beat enters the precompute stage, written after its last; a write to the
// same connection at that edge or later, and the running CRC coming back,
// are kept beside the read word and used instead, "the patch"): content words to the next ULPDU_Length field
// (0: at an FPDU boundary), words since the open FPDU's ULPDU_Length field,
// its pad length, and whether one of its markers or its ULPDU_Length was
// bad; and, in a second table written by the lanes, the running CRC of the
// open FPDU when a segment ended inside it. Until that CRC is back (about
// ten clocks) no segment starts: a stream that splits FPDUs across
// segments pays that bubble per segment, unless the next segment is of the
// same connection and right behind (s_cont): the walk then goes on into it
// ("Segments of one connection back to back", below).
//
// Lane outputs, one beat of the run each (l_* fields, lane i in the i-th
// slice): the beat's data; crc_lo/crc_hi, the words the CRC covers;
// crcw, the word holding the received CRC (fpdu_end only); ulp_lo/ulp_hi,
// the ULPDU octets; run_first/run_last; resume (the run continues an FPDU
// begun in an earlier segment: the CRC resumes from state); fpdu_first (the
// run begins with the ULPDU's first octet), fpdu_end (the run ends the
// FPDU); conn, crc_en; ulen, the ULPDU_Length (fpdu_first runs only);
// mkbad, lenbad (final on fpdu_end); seq, the run's
// number, and vseq, the number of the FPDU end (fpdu_end only), both
// counting in walker order, so that the lanes' outputs can be merged back
// into that order.
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
    input  wire                    s_mk,
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
    output reg  [15:0]             l_seq,
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

reg              p_valid;
reg [DATA_W-1:0] p_data;
reg [CONN_W-1:0] p_conn;
reg              p_first, p_last, p_mk, p_crc_en;
reg              p_full;     // p_whi == WORDS: the beat ends on a beat boundary
reg [WL-1:0]     p_wlo, p_whi;
reg [15*WORDS-1:0] p_t;      // content words from here through the CRC word
reg [19*WORDS-1:0] p_uend;   // octet position (from this beat) past the ULPDU
reg [WORDS-1:0]    p_lenbad;
reg [2*WORDS-1:0]  p_pad;
reg [16*WORDS-1:0] p_len;    // the word's first two octets as a ULPDU_Length
// Where an FPDU whose ULPDU_Length is word j of this beat ends, worked out
// here from its length and the beat's whi, so that the walk's pass only
// picks them by word: it ends in the beat (T <= whi - j, i.e. len <= 4
// (whi - j) - 6), another FPDU starts behind it in the beat (T < whi - j:
// len <= 4 (whi - j) - 10), and the word after its CRC (j + T, mod 2^WL,
// meaningful when it ends in the beat, where len < 64).
reg [WORDS-1:0]    p_e, p_m;
reg [WL*WORDS-1:0] p_a;

wire p_take;               // the walker consumes the precomputed beat
wire p_free = !p_valid || p_take;
// A segment's last beat not yet walked takes in the first beat of the
// next segment of its connection when that shares its stream beat (the
// next one's first word is this one's whi): see "Segments of one
// connection back to back" below.
wire merge_now;
assign s_ready = p_free || merge_now;

genvar g;
generate
    for (g = 0; g < WORDS; g = g + 1) begin : pre
        localparam [18:0] AT = 4 * g + 2;
        localparam [8:0] G4P6 = 4 * g + 6;
        localparam [8:0] G4P10 = 4 * g + 10;
        localparam [WL-1:0] GW = g;
        wire [15:0] len = {s_data[32*g +: 8], s_data[32*g + 8 +: 8]};
        wire [8:0]  lim_e = {{(7-WL){1'b0}}, s_whi, 2'b00} - G4P6;    // signed
        wire [8:0]  lim_m = {{(7-WL){1'b0}}, s_whi, 2'b00} - G4P10;
        wire        len_lt64 = len[15:6] == 10'd0;
        wire [6:0]  t_small = ({1'b0, len[5:0]} + 7'd9) >> 2;
        wire        unused_t = &{1'b0, t_small[6:WL]};
        // (a word of the beat a merge keeps: its FPDU's end against the
        // merged beat's whi)
        wire [15:0] plen = p_len[16*g +: 16];
        wire        keep_w = GW < p_whi;
        always @(posedge clk) begin
            if (merge_now && keep_w) begin
                p_e[g] <= plen[15:6] == 10'd0 && !lim_e[8] && {3'b000, plen[5:0]} <= lim_e;
                p_m[g] <= plen[15:6] == 10'd0 && !lim_m[8] && {3'b000, plen[5:0]} <= lim_m;
            end else if ((p_free || merge_now) && s_valid) begin
                // Content words from the ULPDU_Length word through the CRC
                // word: (2 + len + pad) / 4 + 1 = floor((len + 9) / 4).
                p_t[15*g +: 15] <= {1'b0, len[15:2]} + (len[1:0] == 2'b11 ? 15'd3 : 15'd2);
                p_uend[19*g +: 19] <= AT + {3'b000, len};
                p_lenbad[g] <= len > MAX_ULPDU;
                p_pad[2*g +: 2] <= 2'd2 - len[1:0];
                p_len[16*g +: 16] <= len;
                p_e[g] <= len_lt64 && !lim_e[8] && {3'b000, len[5:0]} <= lim_e;
                p_m[g] <= len_lt64 && !lim_m[8] && {3'b000, len[5:0]} <= lim_m;
                p_a[WL*g +: WL] <= GW + t_small[WL-1:0];
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
    end else if (p_free && s_valid) begin
        p_valid <= 1'b1;
        p_data <= s_data;
        p_conn <= s_conn;
        p_first <= s_first;
        p_last <= s_last;
        p_mk <= s_mk && s_wlo == {WL{1'b0}};
        p_crc_en <= s_crc_en;
        p_wlo <= s_wlo;
        p_whi <= s_whi;
        p_full <= s_whi == WORDS_WL;
    end
    if (rst) begin
        p_valid <= 1'b0;
    end
end

// ---- per-connection tables -------------------------------------------------------
// st: {S[15:0], since[15:0], pad[1:0], mkbad, lenbad, lead}

// A segment's state loads at the edge its first beat enters the precompute
// stage when its words were read at an earlier edge (s_hint) and the walk
// is idle or ends the segment before at that edge without cutting an FPDU
// (the word it writes then, for the same connection) and no cut run's CRC
// is on its way back; otherwise in W_IDLE, a clock later, once no CRC of
// its own connection is on its way back and at most one of another's.
// Either waits while a cfg waits. (Two cut CRCs in flight at most: the
// lanes return them through mpa_rx's two-entry queue, one a clock.)
localparam [1:0] W_IDLE = 2'd0, W_RUN = 2'd2;
reg [1:0] wstate_reg;
reg [1:0]        pend_v;   // cut runs' CRCs on their way back: slot valid
reg [CONN_W-1:0] pend_c0, pend_c1;  // and their connections
wire pend_any = pend_v != 2'b00;
reg       mrg_en_reg = 1'b1; // the latest segment end left an FPDU open
reg              lk_valid;
reg [CONN_W-1:0] lk_conn;  // whose words st_rd and crc_rd (and the patch) hold

wire look = p_free && s_valid && s_first;    // read the tables for it
// A hint is read unless a first beat waits in W_IDLE for the words it read.
wire hint_rd = s_hint && !look && !(wstate_reg == W_IDLE && p_valid && p_first);
wire rd_en = look || hint_rd;
// The address does not wait for look: a first beat on s_* is read (by a
// hint's read too) before the hinted connection.
wire sel_s = s_valid && s_first;
wire [CONN_W-1:0] rd_addr = sel_s ? s_conn : s_hint_conn;
wire p_blocked = (pend_v[0] && pend_c0 == p_conn) || (pend_v[1] && pend_c1 == p_conn) || pend_v == 2'b11;
wire idle_ok = wstate_reg == W_IDLE && !p_blocked && !cfg_valid;
wire lk_hit = look && lk_valid && lk_conn == s_conn && !pend_any && !cfg_valid;
wire load_in = lk_hit && wstate_reg == W_IDLE;
wire load_run;             // lk_hit as the walk ends a segment (below)
wire load = idle_ok && p_valid && p_first;
wire [ST_W-1:0] st_rd;
wire [31:0]     crc_rd;
wire            st_wr_en;
wire [CONN_W-1:0] st_wr_addr;
wire [ST_W-1:0] st_wr_data;

sdp_ram #(.WIDTH(ST_W), .ADDR_W(CONN_W)) st_ram (
    .clk(clk),
    .wr_en(st_wr_en), .wr_addr(st_wr_addr), .wr_data(st_wr_data),
    .rd_en(rd_en), .rd_addr(rd_addr), .rd_data(st_rd)
);

sdp_ram #(.WIDTH(32), .ADDR_W(CONN_W)) crc_ram (
    .clk(clk),
    .wr_en(wb_valid), .wr_addr(wb_conn), .wr_data(wb_state),
    .rd_en(rd_en), .rd_addr(rd_addr), .rd_data(crc_rd)
);

// The patch: the newest write to the looked-up connection since its read.
reg              st_pv, crc_pv;
reg [ST_W-1:0]   st_patch;
reg [31:0]       crc_patch;
// (Compared with every candidate, then chosen: look comes late.)
wire st_pt  = !rd_en ? st_wr_addr == lk_conn : sel_s ? st_wr_addr == s_conn : st_wr_addr == s_hint_conn;
wire crc_pt = !rd_en ? wb_conn == lk_conn : sel_s ? wb_conn == s_conn : wb_conn == s_hint_conn;
always @(posedge clk) begin
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
    end
    if (wb_valid && crc_pt) begin
        crc_pv <= 1'b1;
        crc_patch <= wb_state;
    end
end
wire [ST_W-1:0] st_now = st_pv ? st_patch : st_rd;
wire [31:0]     crc_now = crc_pv ? crc_patch : crc_rd;

assign cfg_ready = wstate_reg == W_IDLE;

// ---- the walk ----------------------------------------------------------------------

reg [15:0]  s_reg;        // content words from pos to the next ULPDU_Length
reg [15:0]  since_reg;    // words from the open FPDU's ULPDU_Length to this beat
reg [1:0]   pad_reg;
reg         mkbad_reg, lenbad_reg;
reg         lead_reg;     // the next FPDU's leading marker is in state_reg
reg         run_open_reg; // the open FPDU has a run in this segment
reg         gl_reg;       // lane of the latest run
reg [WL-1:0] pos_reg;     // next word of the beat (passes after the first)
reg         first_pass_reg;
reg [31:0]  state_reg;    // running CRC of the open FPDU, for a resumed run
reg [7:0]   seq_reg, vseq_reg;

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

// Where this pass starts: past the marker, on the beat's first pass.
wire          mk_here = first_pass_reg && p_mk;
wire [WL-1:0] pos = first_pass_reg ? p_wlo + {{(WL-1){1'b0}}, p_mk} : pos_reg;
wire [WL-1:0] avail = p_whi - pos;
wire          a_present = s_reg != 16'd0;
wire          a_cont = a_present && s_reg > {{(16-WL){1'b0}}, avail};
wire          a_end = a_present && !a_cont;
wire [WL-1:0] h = pos + s_reg[WL-1:0];          // next ULPDU_Length word
wire          b_present = !a_cont && h < p_whi;
// A segment that ends right after a marker in front of an FPDU: the marker
// is the FPDU's first word (RFC 5044 4.3) and goes into its CRC now, in a
// run of its own that makes no ULPDU piece; the FPDU's run in the next
// segment resumes from that CRC.
wire          m_only = mk_here && !a_present && p_whi == {{(WL-1){1'b0}}, 1'b1};
wire [WL-2:0] hi = h[WL-2:0];
wire [14:0]   t_h = p_t[15*hi +: 15];
wire [WL-1:0] room = p_whi - h;
wire          b_end = b_present && p_e[hi];
wire [WL-1:0] after_b = p_a[WL*hi +: WL];
wire          more = b_end && p_m[hi];

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

// Run A: the open FPDU, from pos (its marker included on a first pass).
wire [WL-1:0] a_crc_lo = first_pass_reg ? p_wlo : pos_reg;
wire [WL-1:0] a_crcw = h - {{(WL-1){1'b0}}, 1'b1};
wire [WL-1:0] a_crc_hi = a_end ? a_crcw : p_whi;
wire [OL-1:0] a_ulp_lo = {pos, 2'b00};
// ULPDU octets left in the open FPDU: 4 (S - 1) - pad.
wire [17:0]   a_uleft = {s_reg - 16'd1, 2'b00} - {16'd0, pad_reg};
wire [17:0]   a_uend = {{(16-WL){1'b0}}, pos, 2'b00} + a_uleft;
wire [OL-1:0] a_ulp_hi = (s_reg <= 16'd1) ? a_ulp_lo :
                         (a_uend >= {{(16-WL){1'b0}}, p_whi, 2'b00}) ? {p_whi, 2'b00} : a_uend[OL-1:0];

// Run B: the FPDU whose ULPDU_Length is at h.
wire          b_lead = mk_here && !a_present;   // its marker is word 0
wire [WL-1:0] b_crc_lo = b_lead ? p_wlo : h;
wire [WL-1:0] b_crcw = after_b - {{(WL-1){1'b0}}, 1'b1};
wire [WL-1:0] b_crc_hi = b_end ? b_crcw : p_whi;
wire [OL-1:0] b_ulp_lo = {h, 2'b10};
wire [18:0]   b_uend = p_uend[19*hi +: 19];
wire [OL-1:0] b_ulp_hi = (b_uend >= {{(17-WL){1'b0}}, p_whi, 2'b00}) ? {p_whi, 2'b00} : b_uend[OL-1:0];
wire          b_lenbad = p_lenbad[hi];
wire [1:0]    b_pad = p_pad[2*hi +: 2];

// After the pass.
wire          done = !more;
wire          open_after = a_cont || (b_present && !b_end) || m_only;
wire [15:0]   s_next = a_cont ? s_reg - {{(16-WL){1'b0}}, avail} :
                       (b_present && !b_end) ? {1'b0, t_h} - {{(16-WL){1'b0}}, room} : 16'd0;
wire [15:0]   since_next = a_cont ? since_reg + {{(16-WL){1'b0}}, p_whi - p_wlo} :
                           {{(16-WL){1'b0}}, room};
wire          cont = p_last && nxt_same && p_full;
wire          seg_end = done && p_last && !cont;
wire          cut = p_last && !cont;        // the segment's end ends its runs
assign load_run = lk_hit && step && seg_end && !open_after;

assign p_take = (step && done) || (wstate_reg == W_IDLE && p_valid && !p_first);

// Writes: a segment's end saves the walk; cfg starts a connection afresh
// (the two never coincide: cfg_ready is high only in W_IDLE).
wire cfg_fire = cfg_valid && cfg_ready;
assign st_wr_en = cfg_fire || (step && seg_end);
assign st_wr_addr = cfg_fire ? cfg_conn : p_conn;
assign st_wr_data = cfg_fire ? {ST_W{1'b0}} :
    {open_after ? s_next : 16'd0, since_next,
     a_cont ? pad_reg : b_pad,
     a_cont ? a_mkbad : b_mkbad,
     a_cont ? lenbad_reg : b_lenbad,
     m_only};

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

    case (wstate_reg)
    W_IDLE: if (load || load_in) begin
        {s_reg, since_reg, pad_reg, mkbad_reg, lenbad_reg, lead_reg} <= st_now;
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
                l_seq[8*la +: 8] <= a_new ? seq_reg : seq_reg - 8'd1;
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
                l_seq[8*lb +: 8] <= (a_present && a_new) ? seq_reg + 8'd1 : seq_reg;
                l_vseq[8*lb +: 8] <= a_end ? vseq_reg + 8'd1 : vseq_reg;
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
            seq_reg <= seq_reg + {7'd0, a_present && a_new} + {7'd0, b_present};
            vseq_reg <= vseq_reg + {7'd0, a_end} + {7'd0, b_end};
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
            s_reg <= more ? 16'd0 : s_next;
            since_reg <= since_next;
            pos_reg <= after_b;
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
    default: wstate_reg <= W_IDLE;
    endcase

    // The next segment's state as this one ends (after the case: it wins).
    if (load_run) begin
        {s_reg, since_reg, pad_reg, mkbad_reg, lenbad_reg, lead_reg} <= lk_conn == p_conn ? st_wr_data : st_now;
        state_reg <= crc_now;
        run_open_reg <= 1'b0;
        first_pass_reg <= 1'b1;
        wstate_reg <= W_RUN;
    end

    if (rst) begin
        wstate_reg <= W_IDLE;
        l_valid <= 2'b00;
        pend_v <= 2'b00;
        mrg_en_reg <= 1'b1;
        gl_reg <= 1'b0;
        seq_reg <= 8'd0;
        vseq_reg <= 8'd0;
    end
end

endmodule

`resetall
