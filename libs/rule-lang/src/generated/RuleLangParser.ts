// Generated from ../../grammar/RuleLang.g4 by ANTLR 4.13.1

import * as antlr from "antlr4ng";
import { Token } from "antlr4ng";

// for running tests with parameters, TODO: discuss strategy for typed parameters in CI
// eslint-disable-next-line no-unused-vars
type int = number;


export class RuleLangParser extends antlr.Parser {
    public static readonly SELECTOR = 1;
    public static readonly PROPERTY = 2;
    public static readonly STRING = 3;
    public static readonly DATE = 4;
    public static readonly NUMBER = 5;
    public static readonly DOTTED = 6;
    public static readonly LABEL_REF = 7;
    public static readonly GTE = 8;
    public static readonly LTE = 9;
    public static readonly EQEQ = 10;
    public static readonly NEQ = 11;
    public static readonly GT = 12;
    public static readonly LT = 13;
    public static readonly ARROW = 14;
    public static readonly DOT = 15;
    public static readonly COMMA = 16;
    public static readonly COLON = 17;
    public static readonly LPAREN = 18;
    public static readonly RPAREN = 19;
    public static readonly LBRACK = 20;
    public static readonly RBRACK = 21;
    public static readonly A = 22;
    public static readonly AN = 23;
    public static readonly THE = 24;
    public static readonly IF = 25;
    public static readonly AND = 26;
    public static readonly OR = 27;
    public static readonly OF = 28;
    public static readonly IN = 29;
    public static readonly ITS = 30;
    public static readonly ANY = 31;
    public static readonly ALL = 32;
    public static readonly WHERE = 33;
    public static readonly SATISFIES = 34;
    public static readonly PRESENT = 35;
    public static readonly TRUE = 36;
    public static readonly FALSE = 37;
    public static readonly DATE_KW = 38;
    public static readonly LENGTH = 39;
    public static readonly NUMBER_KW = 40;
    public static readonly IS = 41;
    public static readonly NOT = 42;
    public static readonly GREATER = 43;
    public static readonly THAN = 44;
    public static readonly EQUAL = 45;
    public static readonly TO = 46;
    public static readonly AT = 47;
    public static readonly LEAST = 48;
    public static readonly LESS = 49;
    public static readonly NO = 50;
    public static readonly MORE_KW = 51;
    public static readonly EXACTLY = 52;
    public static readonly SAME = 53;
    public static readonly AS = 54;
    public static readonly EQUALS = 55;
    public static readonly DOES = 56;
    public static readonly VALID = 57;
    public static readonly EMAIL = 58;
    public static readonly ADDRESS = 59;
    public static readonly UUID = 60;
    public static readonly WITHIN = 61;
    public static readonly EMPTY = 62;
    public static readonly LATER = 63;
    public static readonly EARLIER = 64;
    public static readonly OLDER = 65;
    public static readonly YOUNGER = 66;
    public static readonly CONTAINS = 67;
    public static readonly CONTAIN = 68;
    public static readonly HAS = 69;
    public static readonly HAVE = 70;
    public static readonly FORMAT = 71;
    public static readonly MATCHES = 72;
    public static readonly MATCH = 73;
    public static readonly PATTERN = 74;
    public static readonly CLEARS = 75;
    public static readonly SUCCEEDS = 76;
    public static readonly QUALIFIES = 77;
    public static readonly PASSES = 78;
    public static readonly MEETS = 79;
    public static readonly REQUIREMENTS = 80;
    public static readonly APPROVED = 81;
    public static readonly PASSED = 82;
    public static readonly AUTHORIZED = 83;
    public static readonly SANCTIONED = 84;
    public static readonly CERTIFIED = 85;
    public static readonly PERMITTED = 86;
    public static readonly LEGITIMATE = 87;
    public static readonly SATISFIED = 88;
    public static readonly SECOND = 89;
    public static readonly MINUTE = 90;
    public static readonly HOUR = 91;
    public static readonly DAY = 92;
    public static readonly WEEK = 93;
    public static readonly MONTH = 94;
    public static readonly YEAR = 95;
    public static readonly DECADE = 96;
    public static readonly CENTURY = 97;
    public static readonly WORD = 98;
    public static readonly COMMENT = 99;
    public static readonly WS = 100;
    public static readonly UNEXPECTED_CHAR = 101;
    public static readonly RULE_policy = 0;
    public static readonly RULE_statement = 1;
    public static readonly RULE_verboseRule = 2;
    public static readonly RULE_shorthandRule = 3;
    public static readonly RULE_article = 4;
    public static readonly RULE_labelName = 5;
    public static readonly RULE_outcome = 6;
    public static readonly RULE_outcomeWord = 7;
    public static readonly RULE_conditions = 8;
    public static readonly RULE_logicalOp = 9;
    public static readonly RULE_condition = 10;
    public static readonly RULE_refWord = 11;
    public static readonly RULE_presence = 12;
    public static readonly RULE_path = 13;
    public static readonly RULE_naturalPath = 14;
    public static readonly RULE_link = 15;
    public static readonly RULE_pathStep = 16;
    public static readonly RULE_itsPath = 17;
    public static readonly RULE_operator = 18;
    public static readonly RULE_operand = 19;
    public static readonly RULE_literal = 20;
    public static readonly RULE_list = 21;
    public static readonly RULE_period = 22;
    public static readonly RULE_unit = 23;
    public static readonly RULE_labelPredicate = 24;
    public static readonly RULE_keyword = 25;

    public static readonly literalNames = [
        null, null, null, null, null, null, null, null, "'>='", "'<='", 
        "'=='", "'!='", "'>'", "'<'", "'->'", "'.'", "','", "':'", "'('", 
        "')'", "'['", "']'", "'a'", "'an'", "'the'", "'if'", "'and'", "'or'", 
        "'of'", "'in'", "'its'", "'any'", "'all'", "'where'", "'satisfies'", 
        "'present'", "'true'", "'false'", "'date'", "'length'", "'number'", 
        "'is'", "'not'", "'greater'", "'than'", "'equal'", "'to'", "'at'", 
        "'least'", "'less'", "'no'", "'more'", "'exactly'", "'same'", "'as'", 
        "'equals'", "'does'", "'valid'", "'email'", "'address'", "'uuid'", 
        "'within'", "'empty'", "'later'", "'earlier'", "'older'", "'younger'", 
        "'contains'", "'contain'", "'has'", "'have'", "'format'", "'matches'", 
        "'match'", "'pattern'", "'clears'", "'succeeds'", "'qualifies'", 
        "'passes'", "'meets'", "'requirements'", "'approved'", "'passed'", 
        "'authorized'", "'sanctioned'", "'certified'", "'permitted'", "'legitimate'", 
        "'satisfied'"
    ];

    public static readonly symbolicNames = [
        null, "SELECTOR", "PROPERTY", "STRING", "DATE", "NUMBER", "DOTTED", 
        "LABEL_REF", "GTE", "LTE", "EQEQ", "NEQ", "GT", "LT", "ARROW", "DOT", 
        "COMMA", "COLON", "LPAREN", "RPAREN", "LBRACK", "RBRACK", "A", "AN", 
        "THE", "IF", "AND", "OR", "OF", "IN", "ITS", "ANY", "ALL", "WHERE", 
        "SATISFIES", "PRESENT", "TRUE", "FALSE", "DATE_KW", "LENGTH", "NUMBER_KW", 
        "IS", "NOT", "GREATER", "THAN", "EQUAL", "TO", "AT", "LEAST", "LESS", 
        "NO", "MORE_KW", "EXACTLY", "SAME", "AS", "EQUALS", "DOES", "VALID", 
        "EMAIL", "ADDRESS", "UUID", "WITHIN", "EMPTY", "LATER", "EARLIER", 
        "OLDER", "YOUNGER", "CONTAINS", "CONTAIN", "HAS", "HAVE", "FORMAT", 
        "MATCHES", "MATCH", "PATTERN", "CLEARS", "SUCCEEDS", "QUALIFIES", 
        "PASSES", "MEETS", "REQUIREMENTS", "APPROVED", "PASSED", "AUTHORIZED", 
        "SANCTIONED", "CERTIFIED", "PERMITTED", "LEGITIMATE", "SATISFIED", 
        "SECOND", "MINUTE", "HOUR", "DAY", "WEEK", "MONTH", "YEAR", "DECADE", 
        "CENTURY", "WORD", "COMMENT", "WS", "UNEXPECTED_CHAR"
    ];
    public static readonly ruleNames = [
        "policy", "statement", "verboseRule", "shorthandRule", "article", 
        "labelName", "outcome", "outcomeWord", "conditions", "logicalOp", 
        "condition", "refWord", "presence", "path", "naturalPath", "link", 
        "pathStep", "itsPath", "operator", "operand", "literal", "list", 
        "period", "unit", "labelPredicate", "keyword",
    ];

    public get grammarFileName(): string { return "RuleLang.g4"; }
    public get literalNames(): (string | null)[] { return RuleLangParser.literalNames; }
    public get symbolicNames(): (string | null)[] { return RuleLangParser.symbolicNames; }
    public get ruleNames(): string[] { return RuleLangParser.ruleNames; }
    public get serializedATN(): number[] { return RuleLangParser._serializedATN; }

    protected createFailedPredicateException(predicate?: string, message?: string): antlr.FailedPredicateException {
        return new antlr.FailedPredicateException(this, predicate, message);
    }

    public constructor(input: antlr.TokenStream) {
        super(input);
        this.interpreter = new antlr.ParserATNSimulator(this, RuleLangParser._ATN, RuleLangParser.decisionsToDFA, new antlr.PredictionContextCache());
    }
    public policy(): PolicyContext {
        let localContext = new PolicyContext(this.context, this.state);
        this.enterRule(localContext, 0, RuleLangParser.RULE_policy);
        let _la: number;
        try {
            this.enterOuterAlt(localContext, 1);
            {
            this.state = 55;
            this.errorHandler.sync(this);
            _la = this.tokenStream.LA(1);
            while (((((_la - 5)) & ~0x1F) === 0 && ((1 << (_la - 5)) & 4288544771) !== 0) || ((((_la - 37)) & ~0x1F) === 0 && ((1 << (_la - 37)) & 4294967295) !== 0) || ((((_la - 69)) & ~0x1F) === 0 && ((1 << (_la - 69)) & 1073741823) !== 0)) {
                {
                {
                this.state = 52;
                this.statement();
                }
                }
                this.state = 57;
                this.errorHandler.sync(this);
                _la = this.tokenStream.LA(1);
            }
            this.state = 58;
            this.match(RuleLangParser.EOF);
            }
        }
        catch (re) {
            if (re instanceof antlr.RecognitionException) {
                this.errorHandler.reportError(this, re);
                this.errorHandler.recover(this, re);
            } else {
                throw re;
            }
        }
        finally {
            this.exitRule();
        }
        return localContext;
    }
    public statement(): StatementContext {
        let localContext = new StatementContext(this.context, this.state);
        this.enterRule(localContext, 2, RuleLangParser.RULE_statement);
        try {
            this.state = 62;
            this.errorHandler.sync(this);
            switch (this.interpreter.adaptivePredict(this.tokenStream, 1, this.context) ) {
            case 1:
                this.enterOuterAlt(localContext, 1);
                {
                this.state = 60;
                this.verboseRule();
                }
                break;
            case 2:
                this.enterOuterAlt(localContext, 2);
                {
                this.state = 61;
                this.shorthandRule();
                }
                break;
            }
        }
        catch (re) {
            if (re instanceof antlr.RecognitionException) {
                this.errorHandler.reportError(this, re);
                this.errorHandler.recover(this, re);
            } else {
                throw re;
            }
        }
        finally {
            this.exitRule();
        }
        return localContext;
    }
    public verboseRule(): VerboseRuleContext {
        let localContext = new VerboseRuleContext(this.context, this.state);
        this.enterRule(localContext, 4, RuleLangParser.RULE_verboseRule);
        try {
            this.enterOuterAlt(localContext, 1);
            {
            this.state = 67;
            this.errorHandler.sync(this);
            switch (this.interpreter.adaptivePredict(this.tokenStream, 2, this.context) ) {
            case 1:
                {
                this.state = 64;
                this.labelName();
                this.state = 65;
                this.match(RuleLangParser.DOT);
                }
                break;
            }
            this.state = 69;
            this.article();
            this.state = 70;
            this.match(RuleLangParser.SELECTOR);
            this.state = 71;
            this.outcome();
            this.state = 72;
            this.match(RuleLangParser.IF);
            this.state = 73;
            this.conditions();
            this.state = 74;
            this.match(RuleLangParser.DOT);
            }
        }
        catch (re) {
            if (re instanceof antlr.RecognitionException) {
                this.errorHandler.reportError(this, re);
                this.errorHandler.recover(this, re);
            } else {
                throw re;
            }
        }
        finally {
            this.exitRule();
        }
        return localContext;
    }
    public shorthandRule(): ShorthandRuleContext {
        let localContext = new ShorthandRuleContext(this.context, this.state);
        this.enterRule(localContext, 6, RuleLangParser.RULE_shorthandRule);
        let _la: number;
        try {
            this.enterOuterAlt(localContext, 1);
            {
            this.state = 79;
            this.errorHandler.sync(this);
            _la = this.tokenStream.LA(1);
            if (((((_la - 5)) & ~0x1F) === 0 && ((1 << (_la - 5)) & 4287496195) !== 0) || ((((_la - 37)) & ~0x1F) === 0 && ((1 << (_la - 37)) & 4294967295) !== 0) || ((((_la - 69)) & ~0x1F) === 0 && ((1 << (_la - 69)) & 1073741823) !== 0)) {
                {
                this.state = 76;
                this.labelName();
                this.state = 77;
                this.match(RuleLangParser.COLON);
                }
            }

            this.state = 81;
            this.match(RuleLangParser.IF);
            this.state = 82;
            this.conditions();
            this.state = 83;
            this.match(RuleLangParser.ARROW);
            this.state = 84;
            this.outcome();
            this.state = 85;
            this.match(RuleLangParser.DOT);
            }
        }
        catch (re) {
            if (re instanceof antlr.RecognitionException) {
                this.errorHandler.reportError(this, re);
                this.errorHandler.recover(this, re);
            } else {
                throw re;
            }
        }
        finally {
            this.exitRule();
        }
        return localContext;
    }
    public article(): ArticleContext {
        let localContext = new ArticleContext(this.context, this.state);
        this.enterRule(localContext, 8, RuleLangParser.RULE_article);
        let _la: number;
        try {
            this.enterOuterAlt(localContext, 1);
            {
            this.state = 87;
            _la = this.tokenStream.LA(1);
            if(!((((_la) & ~0x1F) === 0 && ((1 << _la) & 29360128) !== 0))) {
            this.errorHandler.recoverInline(this);
            }
            else {
                this.errorHandler.reportMatch(this);
                this.consume();
            }
            }
        }
        catch (re) {
            if (re instanceof antlr.RecognitionException) {
                this.errorHandler.reportError(this, re);
                this.errorHandler.recover(this, re);
            } else {
                throw re;
            }
        }
        finally {
            this.exitRule();
        }
        return localContext;
    }
    public labelName(): LabelNameContext {
        let localContext = new LabelNameContext(this.context, this.state);
        this.enterRule(localContext, 10, RuleLangParser.RULE_labelName);
        try {
            this.state = 93;
            this.errorHandler.sync(this);
            switch (this.tokenStream.LA(1)) {
            case RuleLangParser.WORD:
                this.enterOuterAlt(localContext, 1);
                {
                this.state = 89;
                this.match(RuleLangParser.WORD);
                }
                break;
            case RuleLangParser.NUMBER:
                this.enterOuterAlt(localContext, 2);
                {
                this.state = 90;
                this.match(RuleLangParser.NUMBER);
                }
                break;
            case RuleLangParser.DOTTED:
                this.enterOuterAlt(localContext, 3);
                {
                this.state = 91;
                this.match(RuleLangParser.DOTTED);
                }
                break;
            case RuleLangParser.A:
            case RuleLangParser.AN:
            case RuleLangParser.THE:
            case RuleLangParser.OF:
            case RuleLangParser.IN:
            case RuleLangParser.ITS:
            case RuleLangParser.ANY:
            case RuleLangParser.ALL:
            case RuleLangParser.WHERE:
            case RuleLangParser.SATISFIES:
            case RuleLangParser.PRESENT:
            case RuleLangParser.TRUE:
            case RuleLangParser.FALSE:
            case RuleLangParser.DATE_KW:
            case RuleLangParser.LENGTH:
            case RuleLangParser.NUMBER_KW:
            case RuleLangParser.IS:
            case RuleLangParser.NOT:
            case RuleLangParser.GREATER:
            case RuleLangParser.THAN:
            case RuleLangParser.EQUAL:
            case RuleLangParser.TO:
            case RuleLangParser.AT:
            case RuleLangParser.LEAST:
            case RuleLangParser.LESS:
            case RuleLangParser.NO:
            case RuleLangParser.MORE_KW:
            case RuleLangParser.EXACTLY:
            case RuleLangParser.SAME:
            case RuleLangParser.AS:
            case RuleLangParser.EQUALS:
            case RuleLangParser.DOES:
            case RuleLangParser.VALID:
            case RuleLangParser.EMAIL:
            case RuleLangParser.ADDRESS:
            case RuleLangParser.UUID:
            case RuleLangParser.WITHIN:
            case RuleLangParser.EMPTY:
            case RuleLangParser.LATER:
            case RuleLangParser.EARLIER:
            case RuleLangParser.OLDER:
            case RuleLangParser.YOUNGER:
            case RuleLangParser.CONTAINS:
            case RuleLangParser.CONTAIN:
            case RuleLangParser.HAS:
            case RuleLangParser.HAVE:
            case RuleLangParser.FORMAT:
            case RuleLangParser.MATCHES:
            case RuleLangParser.MATCH:
            case RuleLangParser.PATTERN:
            case RuleLangParser.CLEARS:
            case RuleLangParser.SUCCEEDS:
            case RuleLangParser.QUALIFIES:
            case RuleLangParser.PASSES:
            case RuleLangParser.MEETS:
            case RuleLangParser.REQUIREMENTS:
            case RuleLangParser.APPROVED:
            case RuleLangParser.PASSED:
            case RuleLangParser.AUTHORIZED:
            case RuleLangParser.SANCTIONED:
            case RuleLangParser.CERTIFIED:
            case RuleLangParser.PERMITTED:
            case RuleLangParser.LEGITIMATE:
            case RuleLangParser.SATISFIED:
            case RuleLangParser.SECOND:
            case RuleLangParser.MINUTE:
            case RuleLangParser.HOUR:
            case RuleLangParser.DAY:
            case RuleLangParser.WEEK:
            case RuleLangParser.MONTH:
            case RuleLangParser.YEAR:
            case RuleLangParser.DECADE:
            case RuleLangParser.CENTURY:
                this.enterOuterAlt(localContext, 4);
                {
                this.state = 92;
                this.keyword();
                }
                break;
            default:
                throw new antlr.NoViableAltException(this);
            }
        }
        catch (re) {
            if (re instanceof antlr.RecognitionException) {
                this.errorHandler.reportError(this, re);
                this.errorHandler.recover(this, re);
            } else {
                throw re;
            }
        }
        finally {
            this.exitRule();
        }
        return localContext;
    }
    public outcome(): OutcomeContext {
        let localContext = new OutcomeContext(this.context, this.state);
        this.enterRule(localContext, 12, RuleLangParser.RULE_outcome);
        let _la: number;
        try {
            this.enterOuterAlt(localContext, 1);
            {
            this.state = 96;
            this.errorHandler.sync(this);
            _la = this.tokenStream.LA(1);
            do {
                {
                {
                this.state = 95;
                this.outcomeWord();
                }
                }
                this.state = 98;
                this.errorHandler.sync(this);
                _la = this.tokenStream.LA(1);
            } while (((((_la - 5)) & ~0x1F) === 0 && ((1 << (_la - 5)) & 4293787649) !== 0) || ((((_la - 37)) & ~0x1F) === 0 && ((1 << (_la - 37)) & 4294967295) !== 0) || ((((_la - 69)) & ~0x1F) === 0 && ((1 << (_la - 69)) & 1073741823) !== 0));
            }
        }
        catch (re) {
            if (re instanceof antlr.RecognitionException) {
                this.errorHandler.reportError(this, re);
                this.errorHandler.recover(this, re);
            } else {
                throw re;
            }
        }
        finally {
            this.exitRule();
        }
        return localContext;
    }
    public outcomeWord(): OutcomeWordContext {
        let localContext = new OutcomeWordContext(this.context, this.state);
        this.enterRule(localContext, 14, RuleLangParser.RULE_outcomeWord);
        try {
            this.state = 105;
            this.errorHandler.sync(this);
            switch (this.tokenStream.LA(1)) {
            case RuleLangParser.WORD:
                this.enterOuterAlt(localContext, 1);
                {
                this.state = 100;
                this.match(RuleLangParser.WORD);
                }
                break;
            case RuleLangParser.NUMBER:
                this.enterOuterAlt(localContext, 2);
                {
                this.state = 101;
                this.match(RuleLangParser.NUMBER);
                }
                break;
            case RuleLangParser.A:
            case RuleLangParser.AN:
            case RuleLangParser.THE:
            case RuleLangParser.OF:
            case RuleLangParser.IN:
            case RuleLangParser.ITS:
            case RuleLangParser.ANY:
            case RuleLangParser.ALL:
            case RuleLangParser.WHERE:
            case RuleLangParser.SATISFIES:
            case RuleLangParser.PRESENT:
            case RuleLangParser.TRUE:
            case RuleLangParser.FALSE:
            case RuleLangParser.DATE_KW:
            case RuleLangParser.LENGTH:
            case RuleLangParser.NUMBER_KW:
            case RuleLangParser.IS:
            case RuleLangParser.NOT:
            case RuleLangParser.GREATER:
            case RuleLangParser.THAN:
            case RuleLangParser.EQUAL:
            case RuleLangParser.TO:
            case RuleLangParser.AT:
            case RuleLangParser.LEAST:
            case RuleLangParser.LESS:
            case RuleLangParser.NO:
            case RuleLangParser.MORE_KW:
            case RuleLangParser.EXACTLY:
            case RuleLangParser.SAME:
            case RuleLangParser.AS:
            case RuleLangParser.EQUALS:
            case RuleLangParser.DOES:
            case RuleLangParser.VALID:
            case RuleLangParser.EMAIL:
            case RuleLangParser.ADDRESS:
            case RuleLangParser.UUID:
            case RuleLangParser.WITHIN:
            case RuleLangParser.EMPTY:
            case RuleLangParser.LATER:
            case RuleLangParser.EARLIER:
            case RuleLangParser.OLDER:
            case RuleLangParser.YOUNGER:
            case RuleLangParser.CONTAINS:
            case RuleLangParser.CONTAIN:
            case RuleLangParser.HAS:
            case RuleLangParser.HAVE:
            case RuleLangParser.FORMAT:
            case RuleLangParser.MATCHES:
            case RuleLangParser.MATCH:
            case RuleLangParser.PATTERN:
            case RuleLangParser.CLEARS:
            case RuleLangParser.SUCCEEDS:
            case RuleLangParser.QUALIFIES:
            case RuleLangParser.PASSES:
            case RuleLangParser.MEETS:
            case RuleLangParser.REQUIREMENTS:
            case RuleLangParser.APPROVED:
            case RuleLangParser.PASSED:
            case RuleLangParser.AUTHORIZED:
            case RuleLangParser.SANCTIONED:
            case RuleLangParser.CERTIFIED:
            case RuleLangParser.PERMITTED:
            case RuleLangParser.LEGITIMATE:
            case RuleLangParser.SATISFIED:
            case RuleLangParser.SECOND:
            case RuleLangParser.MINUTE:
            case RuleLangParser.HOUR:
            case RuleLangParser.DAY:
            case RuleLangParser.WEEK:
            case RuleLangParser.MONTH:
            case RuleLangParser.YEAR:
            case RuleLangParser.DECADE:
            case RuleLangParser.CENTURY:
                this.enterOuterAlt(localContext, 3);
                {
                this.state = 102;
                this.keyword();
                }
                break;
            case RuleLangParser.AND:
                this.enterOuterAlt(localContext, 4);
                {
                this.state = 103;
                this.match(RuleLangParser.AND);
                }
                break;
            case RuleLangParser.OR:
                this.enterOuterAlt(localContext, 5);
                {
                this.state = 104;
                this.match(RuleLangParser.OR);
                }
                break;
            default:
                throw new antlr.NoViableAltException(this);
            }
        }
        catch (re) {
            if (re instanceof antlr.RecognitionException) {
                this.errorHandler.reportError(this, re);
                this.errorHandler.recover(this, re);
            } else {
                throw re;
            }
        }
        finally {
            this.exitRule();
        }
        return localContext;
    }
    public conditions(): ConditionsContext {
        let localContext = new ConditionsContext(this.context, this.state);
        this.enterRule(localContext, 16, RuleLangParser.RULE_conditions);
        let _la: number;
        try {
            this.enterOuterAlt(localContext, 1);
            {
            this.state = 107;
            this.condition();
            this.state = 113;
            this.errorHandler.sync(this);
            _la = this.tokenStream.LA(1);
            while (_la === 26 || _la === 27) {
                {
                {
                this.state = 108;
                this.logicalOp();
                this.state = 109;
                this.condition();
                }
                }
                this.state = 115;
                this.errorHandler.sync(this);
                _la = this.tokenStream.LA(1);
            }
            }
        }
        catch (re) {
            if (re instanceof antlr.RecognitionException) {
                this.errorHandler.reportError(this, re);
                this.errorHandler.recover(this, re);
            } else {
                throw re;
            }
        }
        finally {
            this.exitRule();
        }
        return localContext;
    }
    public logicalOp(): LogicalOpContext {
        let localContext = new LogicalOpContext(this.context, this.state);
        this.enterRule(localContext, 18, RuleLangParser.RULE_logicalOp);
        let _la: number;
        try {
            this.enterOuterAlt(localContext, 1);
            {
            this.state = 116;
            _la = this.tokenStream.LA(1);
            if(!(_la === 26 || _la === 27)) {
            this.errorHandler.recoverInline(this);
            }
            else {
                this.errorHandler.reportMatch(this);
                this.consume();
            }
            }
        }
        catch (re) {
            if (re instanceof antlr.RecognitionException) {
                this.errorHandler.reportError(this, re);
                this.errorHandler.recover(this, re);
            } else {
                throw re;
            }
        }
        finally {
            this.exitRule();
        }
        return localContext;
    }
    public condition(): ConditionContext {
        let localContext = new ConditionContext(this.context, this.state);
        this.enterRule(localContext, 20, RuleLangParser.RULE_condition);
        let _la: number;
        try {
            this.state = 185;
            this.errorHandler.sync(this);
            switch (this.interpreter.adaptivePredict(this.tokenStream, 24, this.context) ) {
            case 1:
                localContext = new GroupConditionContext(localContext);
                this.enterOuterAlt(localContext, 1);
                {
                this.state = 118;
                this.match(RuleLangParser.LPAREN);
                this.state = 119;
                this.conditions();
                this.state = 120;
                this.match(RuleLangParser.RPAREN);
                this.state = 122;
                this.errorHandler.sync(this);
                _la = this.tokenStream.LA(1);
                if (_la === 25) {
                    {
                    this.state = 121;
                    this.presence();
                    }
                }

                }
                break;
            case 2:
                localContext = new LabelConditionContext(localContext);
                this.enterOuterAlt(localContext, 2);
                {
                this.state = 124;
                this.match(RuleLangParser.LABEL_REF);
                this.state = 126;
                this.errorHandler.sync(this);
                _la = this.tokenStream.LA(1);
                if (_la === 34 || _la === 41 || ((((_la - 69)) & ~0x1F) === 0 && ((1 << (_la - 69)) & 1985) !== 0)) {
                    {
                    this.state = 125;
                    this.labelPredicate();
                    }
                }

                this.state = 129;
                this.errorHandler.sync(this);
                _la = this.tokenStream.LA(1);
                if (_la === 25) {
                    {
                    this.state = 128;
                    this.presence();
                    }
                }

                }
                break;
            case 3:
                localContext = new RuleRefConditionContext(localContext);
                this.enterOuterAlt(localContext, 3);
                {
                this.state = 132;
                this.errorHandler.sync(this);
                _la = this.tokenStream.LA(1);
                if (_la === 24) {
                    {
                    this.state = 131;
                    this.match(RuleLangParser.THE);
                    }
                }

                this.state = 134;
                this.match(RuleLangParser.SELECTOR);
                this.state = 136;
                this.errorHandler.sync(this);
                _la = this.tokenStream.LA(1);
                do {
                    {
                    {
                    this.state = 135;
                    this.refWord();
                    }
                    }
                    this.state = 138;
                    this.errorHandler.sync(this);
                    _la = this.tokenStream.LA(1);
                } while (((((_la - 5)) & ~0x1F) === 0 && ((1 << (_la - 5)) & 4287496193) !== 0) || ((((_la - 37)) & ~0x1F) === 0 && ((1 << (_la - 37)) & 4294967295) !== 0) || ((((_la - 69)) & ~0x1F) === 0 && ((1 << (_la - 69)) & 1073741823) !== 0));
                this.state = 141;
                this.errorHandler.sync(this);
                _la = this.tokenStream.LA(1);
                if (_la === 25) {
                    {
                    this.state = 140;
                    this.presence();
                    }
                }

                }
                break;
            case 4:
                localContext = new QuantifiedConditionContext(localContext);
                this.enterOuterAlt(localContext, 4);
                {
                this.state = 143;
                (localContext as QuantifiedConditionContext)._quantifier = this.tokenStream.LT(1);
                _la = this.tokenStream.LA(1);
                if(!(_la === 31 || _la === 32)) {
                    (localContext as QuantifiedConditionContext)._quantifier = this.errorHandler.recoverInline(this);
                }
                else {
                    this.errorHandler.reportMatch(this);
                    this.consume();
                }
                this.state = 145;
                this.errorHandler.sync(this);
                _la = this.tokenStream.LA(1);
                if (_la === 28) {
                    {
                    this.state = 144;
                    this.match(RuleLangParser.OF);
                    }
                }

                this.state = 148;
                this.errorHandler.sync(this);
                _la = this.tokenStream.LA(1);
                if (_la === 24) {
                    {
                    this.state = 147;
                    this.match(RuleLangParser.THE);
                    }
                }

                this.state = 150;
                this.path();
                this.state = 151;
                _la = this.tokenStream.LA(1);
                if(!(_la === 33 || _la === 34)) {
                this.errorHandler.recoverInline(this);
                }
                else {
                    this.errorHandler.reportMatch(this);
                    this.consume();
                }
                this.state = 152;
                this.match(RuleLangParser.LPAREN);
                this.state = 153;
                this.conditions();
                this.state = 154;
                this.match(RuleLangParser.RPAREN);
                this.state = 156;
                this.errorHandler.sync(this);
                _la = this.tokenStream.LA(1);
                if (_la === 25) {
                    {
                    this.state = 155;
                    this.presence();
                    }
                }

                }
                break;
            case 5:
                localContext = new MeasuredConditionContext(localContext);
                this.enterOuterAlt(localContext, 5);
                {
                this.state = 159;
                this.errorHandler.sync(this);
                _la = this.tokenStream.LA(1);
                if (_la === 24) {
                    {
                    this.state = 158;
                    this.match(RuleLangParser.THE);
                    }
                }

                this.state = 161;
                (localContext as MeasuredConditionContext)._measure = this.tokenStream.LT(1);
                _la = this.tokenStream.LA(1);
                if(!(_la === 39 || _la === 40)) {
                    (localContext as MeasuredConditionContext)._measure = this.errorHandler.recoverInline(this);
                }
                else {
                    this.errorHandler.reportMatch(this);
                    this.consume();
                }
                this.state = 162;
                this.match(RuleLangParser.OF);
                this.state = 164;
                this.errorHandler.sync(this);
                _la = this.tokenStream.LA(1);
                if (_la === 24) {
                    {
                    this.state = 163;
                    this.match(RuleLangParser.THE);
                    }
                }

                this.state = 166;
                this.path();
                this.state = 167;
                this.operator();
                this.state = 169;
                this.errorHandler.sync(this);
                _la = this.tokenStream.LA(1);
                if ((((_la) & ~0x1F) === 0 && ((1 << _la) & 1091567740) !== 0) || ((((_la - 36)) & ~0x1F) === 0 && ((1 << (_la - 36)) & 7) !== 0)) {
                    {
                    this.state = 168;
                    this.operand();
                    }
                }

                this.state = 172;
                this.errorHandler.sync(this);
                _la = this.tokenStream.LA(1);
                if (_la === 25) {
                    {
                    this.state = 171;
                    this.presence();
                    }
                }

                }
                break;
            case 6:
                localContext = new ComparisonConditionContext(localContext);
                this.enterOuterAlt(localContext, 6);
                {
                this.state = 175;
                this.errorHandler.sync(this);
                _la = this.tokenStream.LA(1);
                if (_la === 24) {
                    {
                    this.state = 174;
                    this.match(RuleLangParser.THE);
                    }
                }

                this.state = 177;
                this.path();
                this.state = 178;
                this.operator();
                this.state = 180;
                this.errorHandler.sync(this);
                _la = this.tokenStream.LA(1);
                if ((((_la) & ~0x1F) === 0 && ((1 << _la) & 1091567740) !== 0) || ((((_la - 36)) & ~0x1F) === 0 && ((1 << (_la - 36)) & 7) !== 0)) {
                    {
                    this.state = 179;
                    this.operand();
                    }
                }

                this.state = 183;
                this.errorHandler.sync(this);
                _la = this.tokenStream.LA(1);
                if (_la === 25) {
                    {
                    this.state = 182;
                    this.presence();
                    }
                }

                }
                break;
            }
        }
        catch (re) {
            if (re instanceof antlr.RecognitionException) {
                this.errorHandler.reportError(this, re);
                this.errorHandler.recover(this, re);
            } else {
                throw re;
            }
        }
        finally {
            this.exitRule();
        }
        return localContext;
    }
    public refWord(): RefWordContext {
        let localContext = new RefWordContext(this.context, this.state);
        this.enterRule(localContext, 22, RuleLangParser.RULE_refWord);
        try {
            this.state = 190;
            this.errorHandler.sync(this);
            switch (this.tokenStream.LA(1)) {
            case RuleLangParser.WORD:
                this.enterOuterAlt(localContext, 1);
                {
                this.state = 187;
                this.match(RuleLangParser.WORD);
                }
                break;
            case RuleLangParser.NUMBER:
                this.enterOuterAlt(localContext, 2);
                {
                this.state = 188;
                this.match(RuleLangParser.NUMBER);
                }
                break;
            case RuleLangParser.A:
            case RuleLangParser.AN:
            case RuleLangParser.THE:
            case RuleLangParser.OF:
            case RuleLangParser.IN:
            case RuleLangParser.ITS:
            case RuleLangParser.ANY:
            case RuleLangParser.ALL:
            case RuleLangParser.WHERE:
            case RuleLangParser.SATISFIES:
            case RuleLangParser.PRESENT:
            case RuleLangParser.TRUE:
            case RuleLangParser.FALSE:
            case RuleLangParser.DATE_KW:
            case RuleLangParser.LENGTH:
            case RuleLangParser.NUMBER_KW:
            case RuleLangParser.IS:
            case RuleLangParser.NOT:
            case RuleLangParser.GREATER:
            case RuleLangParser.THAN:
            case RuleLangParser.EQUAL:
            case RuleLangParser.TO:
            case RuleLangParser.AT:
            case RuleLangParser.LEAST:
            case RuleLangParser.LESS:
            case RuleLangParser.NO:
            case RuleLangParser.MORE_KW:
            case RuleLangParser.EXACTLY:
            case RuleLangParser.SAME:
            case RuleLangParser.AS:
            case RuleLangParser.EQUALS:
            case RuleLangParser.DOES:
            case RuleLangParser.VALID:
            case RuleLangParser.EMAIL:
            case RuleLangParser.ADDRESS:
            case RuleLangParser.UUID:
            case RuleLangParser.WITHIN:
            case RuleLangParser.EMPTY:
            case RuleLangParser.LATER:
            case RuleLangParser.EARLIER:
            case RuleLangParser.OLDER:
            case RuleLangParser.YOUNGER:
            case RuleLangParser.CONTAINS:
            case RuleLangParser.CONTAIN:
            case RuleLangParser.HAS:
            case RuleLangParser.HAVE:
            case RuleLangParser.FORMAT:
            case RuleLangParser.MATCHES:
            case RuleLangParser.MATCH:
            case RuleLangParser.PATTERN:
            case RuleLangParser.CLEARS:
            case RuleLangParser.SUCCEEDS:
            case RuleLangParser.QUALIFIES:
            case RuleLangParser.PASSES:
            case RuleLangParser.MEETS:
            case RuleLangParser.REQUIREMENTS:
            case RuleLangParser.APPROVED:
            case RuleLangParser.PASSED:
            case RuleLangParser.AUTHORIZED:
            case RuleLangParser.SANCTIONED:
            case RuleLangParser.CERTIFIED:
            case RuleLangParser.PERMITTED:
            case RuleLangParser.LEGITIMATE:
            case RuleLangParser.SATISFIED:
            case RuleLangParser.SECOND:
            case RuleLangParser.MINUTE:
            case RuleLangParser.HOUR:
            case RuleLangParser.DAY:
            case RuleLangParser.WEEK:
            case RuleLangParser.MONTH:
            case RuleLangParser.YEAR:
            case RuleLangParser.DECADE:
            case RuleLangParser.CENTURY:
                this.enterOuterAlt(localContext, 3);
                {
                this.state = 189;
                this.keyword();
                }
                break;
            default:
                throw new antlr.NoViableAltException(this);
            }
        }
        catch (re) {
            if (re instanceof antlr.RecognitionException) {
                this.errorHandler.reportError(this, re);
                this.errorHandler.recover(this, re);
            } else {
                throw re;
            }
        }
        finally {
            this.exitRule();
        }
        return localContext;
    }
    public presence(): PresenceContext {
        let localContext = new PresenceContext(this.context, this.state);
        this.enterRule(localContext, 24, RuleLangParser.RULE_presence);
        try {
            this.enterOuterAlt(localContext, 1);
            {
            this.state = 192;
            this.match(RuleLangParser.IF);
            this.state = 193;
            this.match(RuleLangParser.PRESENT);
            }
        }
        catch (re) {
            if (re instanceof antlr.RecognitionException) {
                this.errorHandler.reportError(this, re);
                this.errorHandler.recover(this, re);
            } else {
                throw re;
            }
        }
        finally {
            this.exitRule();
        }
        return localContext;
    }
    public path(): PathContext {
        let localContext = new PathContext(this.context, this.state);
        this.enterRule(localContext, 26, RuleLangParser.RULE_path);
        try {
            this.state = 198;
            this.errorHandler.sync(this);
            switch (this.tokenStream.LA(1)) {
            case RuleLangParser.PROPERTY:
                this.enterOuterAlt(localContext, 1);
                {
                this.state = 195;
                this.naturalPath();
                }
                break;
            case RuleLangParser.DOTTED:
                this.enterOuterAlt(localContext, 2);
                {
                this.state = 196;
                this.match(RuleLangParser.DOTTED);
                }
                break;
            case RuleLangParser.ITS:
                this.enterOuterAlt(localContext, 3);
                {
                this.state = 197;
                this.itsPath();
                }
                break;
            default:
                throw new antlr.NoViableAltException(this);
            }
        }
        catch (re) {
            if (re instanceof antlr.RecognitionException) {
                this.errorHandler.reportError(this, re);
                this.errorHandler.recover(this, re);
            } else {
                throw re;
            }
        }
        finally {
            this.exitRule();
        }
        return localContext;
    }
    public naturalPath(): NaturalPathContext {
        let localContext = new NaturalPathContext(this.context, this.state);
        this.enterRule(localContext, 28, RuleLangParser.RULE_naturalPath);
        let _la: number;
        try {
            this.enterOuterAlt(localContext, 1);
            {
            this.state = 200;
            this.match(RuleLangParser.PROPERTY);
            this.state = 206;
            this.errorHandler.sync(this);
            _la = this.tokenStream.LA(1);
            while (_la === 28 || _la === 29) {
                {
                {
                this.state = 201;
                this.link();
                this.state = 202;
                this.pathStep();
                }
                }
                this.state = 208;
                this.errorHandler.sync(this);
                _la = this.tokenStream.LA(1);
            }
            }
        }
        catch (re) {
            if (re instanceof antlr.RecognitionException) {
                this.errorHandler.reportError(this, re);
                this.errorHandler.recover(this, re);
            } else {
                throw re;
            }
        }
        finally {
            this.exitRule();
        }
        return localContext;
    }
    public link(): LinkContext {
        let localContext = new LinkContext(this.context, this.state);
        this.enterRule(localContext, 30, RuleLangParser.RULE_link);
        let _la: number;
        try {
            this.enterOuterAlt(localContext, 1);
            {
            this.state = 209;
            _la = this.tokenStream.LA(1);
            if(!(_la === 28 || _la === 29)) {
            this.errorHandler.recoverInline(this);
            }
            else {
                this.errorHandler.reportMatch(this);
                this.consume();
            }
            }
        }
        catch (re) {
            if (re instanceof antlr.RecognitionException) {
                this.errorHandler.reportError(this, re);
                this.errorHandler.recover(this, re);
            } else {
                throw re;
            }
        }
        finally {
            this.exitRule();
        }
        return localContext;
    }
    public pathStep(): PathStepContext {
        let localContext = new PathStepContext(this.context, this.state);
        this.enterRule(localContext, 32, RuleLangParser.RULE_pathStep);
        let _la: number;
        try {
            this.state = 216;
            this.errorHandler.sync(this);
            switch (this.tokenStream.LA(1)) {
            case RuleLangParser.SELECTOR:
            case RuleLangParser.PROPERTY:
            case RuleLangParser.THE:
                this.enterOuterAlt(localContext, 1);
                {
                this.state = 212;
                this.errorHandler.sync(this);
                _la = this.tokenStream.LA(1);
                if (_la === 24) {
                    {
                    this.state = 211;
                    this.match(RuleLangParser.THE);
                    }
                }

                this.state = 214;
                _la = this.tokenStream.LA(1);
                if(!(_la === 1 || _la === 2)) {
                this.errorHandler.recoverInline(this);
                }
                else {
                    this.errorHandler.reportMatch(this);
                    this.consume();
                }
                }
                break;
            case RuleLangParser.ITS:
                this.enterOuterAlt(localContext, 2);
                {
                this.state = 215;
                this.itsPath();
                }
                break;
            default:
                throw new antlr.NoViableAltException(this);
            }
        }
        catch (re) {
            if (re instanceof antlr.RecognitionException) {
                this.errorHandler.reportError(this, re);
                this.errorHandler.recover(this, re);
            } else {
                throw re;
            }
        }
        finally {
            this.exitRule();
        }
        return localContext;
    }
    public itsPath(): ItsPathContext {
        let localContext = new ItsPathContext(this.context, this.state);
        this.enterRule(localContext, 34, RuleLangParser.RULE_itsPath);
        let _la: number;
        try {
            this.enterOuterAlt(localContext, 1);
            {
            this.state = 218;
            this.match(RuleLangParser.ITS);
            this.state = 220;
            this.errorHandler.sync(this);
            _la = this.tokenStream.LA(1);
            if (_la === 2) {
                {
                this.state = 219;
                this.match(RuleLangParser.PROPERTY);
                }
            }

            }
        }
        catch (re) {
            if (re instanceof antlr.RecognitionException) {
                this.errorHandler.reportError(this, re);
                this.errorHandler.recover(this, re);
            } else {
                throw re;
            }
        }
        finally {
            this.exitRule();
        }
        return localContext;
    }
    public operator(): OperatorContext {
        let localContext = new OperatorContext(this.context, this.state);
        this.enterRule(localContext, 36, RuleLangParser.RULE_operator);
        let _la: number;
        try {
            this.state = 386;
            this.errorHandler.sync(this);
            switch (this.interpreter.adaptivePredict(this.tokenStream, 51, this.context) ) {
            case 1:
                this.enterOuterAlt(localContext, 1);
                {
                this.state = 222;
                this.match(RuleLangParser.IS);
                this.state = 224;
                this.errorHandler.sync(this);
                _la = this.tokenStream.LA(1);
                if (_la === 42) {
                    {
                    this.state = 223;
                    this.match(RuleLangParser.NOT);
                    }
                }

                this.state = 226;
                this.match(RuleLangParser.GREATER);
                this.state = 227;
                this.match(RuleLangParser.THAN);
                this.state = 228;
                this.match(RuleLangParser.OR);
                this.state = 229;
                this.match(RuleLangParser.EQUAL);
                this.state = 230;
                this.match(RuleLangParser.TO);
                }
                break;
            case 2:
                this.enterOuterAlt(localContext, 2);
                {
                this.state = 231;
                this.match(RuleLangParser.IS);
                this.state = 233;
                this.errorHandler.sync(this);
                _la = this.tokenStream.LA(1);
                if (_la === 42) {
                    {
                    this.state = 232;
                    this.match(RuleLangParser.NOT);
                    }
                }

                this.state = 235;
                this.match(RuleLangParser.GREATER);
                this.state = 236;
                this.match(RuleLangParser.THAN);
                }
                break;
            case 3:
                this.enterOuterAlt(localContext, 3);
                {
                this.state = 237;
                this.match(RuleLangParser.IS);
                this.state = 239;
                this.errorHandler.sync(this);
                _la = this.tokenStream.LA(1);
                if (_la === 42) {
                    {
                    this.state = 238;
                    this.match(RuleLangParser.NOT);
                    }
                }

                this.state = 241;
                this.match(RuleLangParser.AT);
                this.state = 242;
                this.match(RuleLangParser.LEAST);
                }
                break;
            case 4:
                this.enterOuterAlt(localContext, 4);
                {
                this.state = 243;
                this.match(RuleLangParser.IS);
                this.state = 245;
                this.errorHandler.sync(this);
                _la = this.tokenStream.LA(1);
                if (_la === 42) {
                    {
                    this.state = 244;
                    this.match(RuleLangParser.NOT);
                    }
                }

                this.state = 247;
                this.match(RuleLangParser.LESS);
                this.state = 248;
                this.match(RuleLangParser.THAN);
                this.state = 249;
                this.match(RuleLangParser.OR);
                this.state = 250;
                this.match(RuleLangParser.EQUAL);
                this.state = 251;
                this.match(RuleLangParser.TO);
                }
                break;
            case 5:
                this.enterOuterAlt(localContext, 5);
                {
                this.state = 252;
                this.match(RuleLangParser.IS);
                this.state = 254;
                this.errorHandler.sync(this);
                _la = this.tokenStream.LA(1);
                if (_la === 42) {
                    {
                    this.state = 253;
                    this.match(RuleLangParser.NOT);
                    }
                }

                this.state = 256;
                this.match(RuleLangParser.LESS);
                this.state = 257;
                this.match(RuleLangParser.THAN);
                }
                break;
            case 6:
                this.enterOuterAlt(localContext, 6);
                {
                this.state = 258;
                this.match(RuleLangParser.IS);
                this.state = 259;
                this.match(RuleLangParser.NO);
                this.state = 260;
                this.match(RuleLangParser.MORE_KW);
                this.state = 261;
                this.match(RuleLangParser.THAN);
                }
                break;
            case 7:
                this.enterOuterAlt(localContext, 7);
                {
                this.state = 262;
                this.match(RuleLangParser.IS);
                this.state = 264;
                this.errorHandler.sync(this);
                _la = this.tokenStream.LA(1);
                if (_la === 42) {
                    {
                    this.state = 263;
                    this.match(RuleLangParser.NOT);
                    }
                }

                this.state = 266;
                this.match(RuleLangParser.EXACTLY);
                this.state = 267;
                this.match(RuleLangParser.EQUAL);
                this.state = 268;
                this.match(RuleLangParser.TO);
                }
                break;
            case 8:
                this.enterOuterAlt(localContext, 8);
                {
                this.state = 269;
                this.match(RuleLangParser.IS);
                this.state = 271;
                this.errorHandler.sync(this);
                _la = this.tokenStream.LA(1);
                if (_la === 42) {
                    {
                    this.state = 270;
                    this.match(RuleLangParser.NOT);
                    }
                }

                this.state = 273;
                this.match(RuleLangParser.EXACTLY);
                }
                break;
            case 9:
                this.enterOuterAlt(localContext, 9);
                {
                this.state = 274;
                this.match(RuleLangParser.IS);
                this.state = 276;
                this.errorHandler.sync(this);
                _la = this.tokenStream.LA(1);
                if (_la === 42) {
                    {
                    this.state = 275;
                    this.match(RuleLangParser.NOT);
                    }
                }

                this.state = 278;
                this.match(RuleLangParser.EQUAL);
                this.state = 279;
                this.match(RuleLangParser.TO);
                }
                break;
            case 10:
                this.enterOuterAlt(localContext, 10);
                {
                this.state = 280;
                this.match(RuleLangParser.IS);
                this.state = 282;
                this.errorHandler.sync(this);
                _la = this.tokenStream.LA(1);
                if (_la === 42) {
                    {
                    this.state = 281;
                    this.match(RuleLangParser.NOT);
                    }
                }

                this.state = 284;
                this.match(RuleLangParser.THE);
                this.state = 285;
                this.match(RuleLangParser.SAME);
                this.state = 286;
                this.match(RuleLangParser.AS);
                }
                break;
            case 11:
                this.enterOuterAlt(localContext, 11);
                {
                this.state = 287;
                this.match(RuleLangParser.IS);
                this.state = 289;
                this.errorHandler.sync(this);
                _la = this.tokenStream.LA(1);
                if (_la === 42) {
                    {
                    this.state = 288;
                    this.match(RuleLangParser.NOT);
                    }
                }

                this.state = 291;
                this.match(RuleLangParser.IN);
                }
                break;
            case 12:
                this.enterOuterAlt(localContext, 12);
                {
                this.state = 292;
                this.match(RuleLangParser.IS);
                this.state = 294;
                this.errorHandler.sync(this);
                _la = this.tokenStream.LA(1);
                if (_la === 42) {
                    {
                    this.state = 293;
                    this.match(RuleLangParser.NOT);
                    }
                }

                this.state = 296;
                this.match(RuleLangParser.A);
                this.state = 297;
                this.match(RuleLangParser.VALID);
                this.state = 298;
                this.match(RuleLangParser.EMAIL);
                this.state = 299;
                this.match(RuleLangParser.ADDRESS);
                }
                break;
            case 13:
                this.enterOuterAlt(localContext, 13);
                {
                this.state = 300;
                this.match(RuleLangParser.IS);
                this.state = 302;
                this.errorHandler.sync(this);
                _la = this.tokenStream.LA(1);
                if (_la === 42) {
                    {
                    this.state = 301;
                    this.match(RuleLangParser.NOT);
                    }
                }

                this.state = 304;
                this.match(RuleLangParser.A);
                this.state = 305;
                this.match(RuleLangParser.VALID);
                this.state = 306;
                this.match(RuleLangParser.EMAIL);
                }
                break;
            case 14:
                this.enterOuterAlt(localContext, 14);
                {
                this.state = 307;
                this.match(RuleLangParser.IS);
                this.state = 309;
                this.errorHandler.sync(this);
                _la = this.tokenStream.LA(1);
                if (_la === 42) {
                    {
                    this.state = 308;
                    this.match(RuleLangParser.NOT);
                    }
                }

                this.state = 311;
                this.match(RuleLangParser.A);
                this.state = 312;
                this.match(RuleLangParser.VALID);
                this.state = 313;
                this.match(RuleLangParser.UUID);
                }
                break;
            case 15:
                this.enterOuterAlt(localContext, 15);
                {
                this.state = 314;
                this.match(RuleLangParser.IS);
                this.state = 316;
                this.errorHandler.sync(this);
                _la = this.tokenStream.LA(1);
                if (_la === 42) {
                    {
                    this.state = 315;
                    this.match(RuleLangParser.NOT);
                    }
                }

                this.state = 318;
                this.match(RuleLangParser.A);
                this.state = 319;
                this.match(RuleLangParser.VALID);
                this.state = 320;
                this.match(RuleLangParser.DATE_KW);
                }
                break;
            case 16:
                this.enterOuterAlt(localContext, 16);
                {
                this.state = 321;
                this.match(RuleLangParser.IS);
                this.state = 323;
                this.errorHandler.sync(this);
                _la = this.tokenStream.LA(1);
                if (_la === 42) {
                    {
                    this.state = 322;
                    this.match(RuleLangParser.NOT);
                    }
                }

                this.state = 325;
                this.match(RuleLangParser.WITHIN);
                }
                break;
            case 17:
                this.enterOuterAlt(localContext, 17);
                {
                this.state = 326;
                this.match(RuleLangParser.IS);
                this.state = 328;
                this.errorHandler.sync(this);
                _la = this.tokenStream.LA(1);
                if (_la === 42) {
                    {
                    this.state = 327;
                    this.match(RuleLangParser.NOT);
                    }
                }

                this.state = 330;
                this.match(RuleLangParser.EMPTY);
                }
                break;
            case 18:
                this.enterOuterAlt(localContext, 18);
                {
                this.state = 331;
                this.match(RuleLangParser.IS);
                this.state = 333;
                this.errorHandler.sync(this);
                _la = this.tokenStream.LA(1);
                if (_la === 42) {
                    {
                    this.state = 332;
                    this.match(RuleLangParser.NOT);
                    }
                }

                this.state = 335;
                this.match(RuleLangParser.LATER);
                this.state = 336;
                this.match(RuleLangParser.THAN);
                }
                break;
            case 19:
                this.enterOuterAlt(localContext, 19);
                {
                this.state = 337;
                this.match(RuleLangParser.IS);
                this.state = 339;
                this.errorHandler.sync(this);
                _la = this.tokenStream.LA(1);
                if (_la === 42) {
                    {
                    this.state = 338;
                    this.match(RuleLangParser.NOT);
                    }
                }

                this.state = 341;
                this.match(RuleLangParser.EARLIER);
                this.state = 342;
                this.match(RuleLangParser.THAN);
                }
                break;
            case 20:
                this.enterOuterAlt(localContext, 20);
                {
                this.state = 343;
                this.match(RuleLangParser.IS);
                this.state = 345;
                this.errorHandler.sync(this);
                _la = this.tokenStream.LA(1);
                if (_la === 42) {
                    {
                    this.state = 344;
                    this.match(RuleLangParser.NOT);
                    }
                }

                this.state = 347;
                this.match(RuleLangParser.OLDER);
                this.state = 348;
                this.match(RuleLangParser.THAN);
                }
                break;
            case 21:
                this.enterOuterAlt(localContext, 21);
                {
                this.state = 349;
                this.match(RuleLangParser.IS);
                this.state = 351;
                this.errorHandler.sync(this);
                _la = this.tokenStream.LA(1);
                if (_la === 42) {
                    {
                    this.state = 350;
                    this.match(RuleLangParser.NOT);
                    }
                }

                this.state = 353;
                this.match(RuleLangParser.YOUNGER);
                this.state = 354;
                this.match(RuleLangParser.THAN);
                }
                break;
            case 22:
                this.enterOuterAlt(localContext, 22);
                {
                this.state = 355;
                this.match(RuleLangParser.IS);
                this.state = 356;
                this.match(RuleLangParser.NOT);
                }
                break;
            case 23:
                this.enterOuterAlt(localContext, 23);
                {
                this.state = 357;
                this.match(RuleLangParser.IS);
                }
                break;
            case 24:
                this.enterOuterAlt(localContext, 24);
                {
                this.state = 358;
                this.match(RuleLangParser.EQUALS);
                }
                break;
            case 25:
                this.enterOuterAlt(localContext, 25);
                {
                this.state = 359;
                this.match(RuleLangParser.DOES);
                this.state = 360;
                this.match(RuleLangParser.NOT);
                this.state = 361;
                this.match(RuleLangParser.EQUAL);
                }
                break;
            case 26:
                this.enterOuterAlt(localContext, 26);
                {
                this.state = 362;
                this.match(RuleLangParser.CONTAINS);
                }
                break;
            case 27:
                this.enterOuterAlt(localContext, 27);
                {
                this.state = 363;
                this.match(RuleLangParser.DOES);
                this.state = 364;
                this.match(RuleLangParser.NOT);
                this.state = 365;
                this.match(RuleLangParser.CONTAIN);
                }
                break;
            case 28:
                this.enterOuterAlt(localContext, 28);
                {
                this.state = 366;
                this.match(RuleLangParser.HAS);
                this.state = 367;
                this.match(RuleLangParser.THE);
                this.state = 368;
                this.match(RuleLangParser.FORMAT);
                }
                break;
            case 29:
                this.enterOuterAlt(localContext, 29);
                {
                this.state = 369;
                this.match(RuleLangParser.DOES);
                this.state = 370;
                this.match(RuleLangParser.NOT);
                this.state = 371;
                this.match(RuleLangParser.HAVE);
                this.state = 372;
                this.match(RuleLangParser.THE);
                this.state = 373;
                this.match(RuleLangParser.FORMAT);
                }
                break;
            case 30:
                this.enterOuterAlt(localContext, 30);
                {
                this.state = 374;
                this.match(RuleLangParser.MATCHES);
                this.state = 375;
                this.match(RuleLangParser.PATTERN);
                }
                break;
            case 31:
                this.enterOuterAlt(localContext, 31);
                {
                this.state = 376;
                this.match(RuleLangParser.DOES);
                this.state = 377;
                this.match(RuleLangParser.NOT);
                this.state = 378;
                this.match(RuleLangParser.MATCH);
                this.state = 379;
                this.match(RuleLangParser.PATTERN);
                }
                break;
            case 32:
                this.enterOuterAlt(localContext, 32);
                {
                this.state = 380;
                this.match(RuleLangParser.GTE);
                }
                break;
            case 33:
                this.enterOuterAlt(localContext, 33);
                {
                this.state = 381;
                this.match(RuleLangParser.GT);
                }
                break;
            case 34:
                this.enterOuterAlt(localContext, 34);
                {
                this.state = 382;
                this.match(RuleLangParser.LTE);
                }
                break;
            case 35:
                this.enterOuterAlt(localContext, 35);
                {
                this.state = 383;
                this.match(RuleLangParser.LT);
                }
                break;
            case 36:
                this.enterOuterAlt(localContext, 36);
                {
                this.state = 384;
                this.match(RuleLangParser.EQEQ);
                }
                break;
            case 37:
                this.enterOuterAlt(localContext, 37);
                {
                this.state = 385;
                this.match(RuleLangParser.NEQ);
                }
                break;
            }
        }
        catch (re) {
            if (re instanceof antlr.RecognitionException) {
                this.errorHandler.reportError(this, re);
                this.errorHandler.recover(this, re);
            } else {
                throw re;
            }
        }
        finally {
            this.exitRule();
        }
        return localContext;
    }
    public operand(): OperandContext {
        let localContext = new OperandContext(this.context, this.state);
        this.enterRule(localContext, 38, RuleLangParser.RULE_operand);
        let _la: number;
        try {
            this.state = 395;
            this.errorHandler.sync(this);
            switch (this.interpreter.adaptivePredict(this.tokenStream, 53, this.context) ) {
            case 1:
                this.enterOuterAlt(localContext, 1);
                {
                this.state = 388;
                this.period();
                }
                break;
            case 2:
                this.enterOuterAlt(localContext, 2);
                {
                this.state = 389;
                this.literal();
                }
                break;
            case 3:
                this.enterOuterAlt(localContext, 3);
                {
                this.state = 390;
                this.list();
                }
                break;
            case 4:
                this.enterOuterAlt(localContext, 4);
                {
                this.state = 392;
                this.errorHandler.sync(this);
                _la = this.tokenStream.LA(1);
                if (_la === 24) {
                    {
                    this.state = 391;
                    this.match(RuleLangParser.THE);
                    }
                }

                this.state = 394;
                this.path();
                }
                break;
            }
        }
        catch (re) {
            if (re instanceof antlr.RecognitionException) {
                this.errorHandler.reportError(this, re);
                this.errorHandler.recover(this, re);
            } else {
                throw re;
            }
        }
        finally {
            this.exitRule();
        }
        return localContext;
    }
    public literal(): LiteralContext {
        let localContext = new LiteralContext(this.context, this.state);
        this.enterRule(localContext, 40, RuleLangParser.RULE_literal);
        try {
            this.state = 406;
            this.errorHandler.sync(this);
            switch (this.tokenStream.LA(1)) {
            case RuleLangParser.STRING:
                this.enterOuterAlt(localContext, 1);
                {
                this.state = 397;
                this.match(RuleLangParser.STRING);
                }
                break;
            case RuleLangParser.NUMBER:
                this.enterOuterAlt(localContext, 2);
                {
                this.state = 398;
                this.match(RuleLangParser.NUMBER);
                }
                break;
            case RuleLangParser.TRUE:
                this.enterOuterAlt(localContext, 3);
                {
                this.state = 399;
                this.match(RuleLangParser.TRUE);
                }
                break;
            case RuleLangParser.FALSE:
                this.enterOuterAlt(localContext, 4);
                {
                this.state = 400;
                this.match(RuleLangParser.FALSE);
                }
                break;
            case RuleLangParser.DATE:
                this.enterOuterAlt(localContext, 5);
                {
                this.state = 401;
                this.match(RuleLangParser.DATE);
                }
                break;
            case RuleLangParser.DATE_KW:
                this.enterOuterAlt(localContext, 6);
                {
                this.state = 402;
                this.match(RuleLangParser.DATE_KW);
                this.state = 403;
                this.match(RuleLangParser.LPAREN);
                this.state = 404;
                this.match(RuleLangParser.DATE);
                this.state = 405;
                this.match(RuleLangParser.RPAREN);
                }
                break;
            default:
                throw new antlr.NoViableAltException(this);
            }
        }
        catch (re) {
            if (re instanceof antlr.RecognitionException) {
                this.errorHandler.reportError(this, re);
                this.errorHandler.recover(this, re);
            } else {
                throw re;
            }
        }
        finally {
            this.exitRule();
        }
        return localContext;
    }
    public list(): ListContext {
        let localContext = new ListContext(this.context, this.state);
        this.enterRule(localContext, 42, RuleLangParser.RULE_list);
        let _la: number;
        try {
            this.enterOuterAlt(localContext, 1);
            {
            this.state = 408;
            this.match(RuleLangParser.LBRACK);
            this.state = 417;
            this.errorHandler.sync(this);
            _la = this.tokenStream.LA(1);
            if ((((_la) & ~0x1F) === 0 && ((1 << _la) & 56) !== 0) || ((((_la - 36)) & ~0x1F) === 0 && ((1 << (_la - 36)) & 7) !== 0)) {
                {
                this.state = 409;
                this.literal();
                this.state = 414;
                this.errorHandler.sync(this);
                _la = this.tokenStream.LA(1);
                while (_la === 16) {
                    {
                    {
                    this.state = 410;
                    this.match(RuleLangParser.COMMA);
                    this.state = 411;
                    this.literal();
                    }
                    }
                    this.state = 416;
                    this.errorHandler.sync(this);
                    _la = this.tokenStream.LA(1);
                }
                }
            }

            this.state = 419;
            this.match(RuleLangParser.RBRACK);
            }
        }
        catch (re) {
            if (re instanceof antlr.RecognitionException) {
                this.errorHandler.reportError(this, re);
                this.errorHandler.recover(this, re);
            } else {
                throw re;
            }
        }
        finally {
            this.exitRule();
        }
        return localContext;
    }
    public period(): PeriodContext {
        let localContext = new PeriodContext(this.context, this.state);
        this.enterRule(localContext, 44, RuleLangParser.RULE_period);
        try {
            this.enterOuterAlt(localContext, 1);
            {
            this.state = 421;
            this.match(RuleLangParser.NUMBER);
            this.state = 422;
            this.unit();
            }
        }
        catch (re) {
            if (re instanceof antlr.RecognitionException) {
                this.errorHandler.reportError(this, re);
                this.errorHandler.recover(this, re);
            } else {
                throw re;
            }
        }
        finally {
            this.exitRule();
        }
        return localContext;
    }
    public unit(): UnitContext {
        let localContext = new UnitContext(this.context, this.state);
        this.enterRule(localContext, 46, RuleLangParser.RULE_unit);
        let _la: number;
        try {
            this.enterOuterAlt(localContext, 1);
            {
            this.state = 424;
            _la = this.tokenStream.LA(1);
            if(!(((((_la - 89)) & ~0x1F) === 0 && ((1 << (_la - 89)) & 511) !== 0))) {
            this.errorHandler.recoverInline(this);
            }
            else {
                this.errorHandler.reportMatch(this);
                this.consume();
            }
            }
        }
        catch (re) {
            if (re instanceof antlr.RecognitionException) {
                this.errorHandler.reportError(this, re);
                this.errorHandler.recover(this, re);
            } else {
                throw re;
            }
        }
        finally {
            this.exitRule();
        }
        return localContext;
    }
    public labelPredicate(): LabelPredicateContext {
        let localContext = new LabelPredicateContext(this.context, this.state);
        this.enterRule(localContext, 48, RuleLangParser.RULE_labelPredicate);
        let _la: number;
        try {
            this.state = 437;
            this.errorHandler.sync(this);
            switch (this.tokenStream.LA(1)) {
            case RuleLangParser.MEETS:
                this.enterOuterAlt(localContext, 1);
                {
                this.state = 426;
                this.match(RuleLangParser.MEETS);
                this.state = 427;
                this.match(RuleLangParser.REQUIREMENTS);
                }
                break;
            case RuleLangParser.CLEARS:
                this.enterOuterAlt(localContext, 2);
                {
                this.state = 428;
                this.match(RuleLangParser.CLEARS);
                }
                break;
            case RuleLangParser.SUCCEEDS:
                this.enterOuterAlt(localContext, 3);
                {
                this.state = 429;
                this.match(RuleLangParser.SUCCEEDS);
                }
                break;
            case RuleLangParser.QUALIFIES:
                this.enterOuterAlt(localContext, 4);
                {
                this.state = 430;
                this.match(RuleLangParser.QUALIFIES);
                }
                break;
            case RuleLangParser.PASSES:
                this.enterOuterAlt(localContext, 5);
                {
                this.state = 431;
                this.match(RuleLangParser.PASSES);
                }
                break;
            case RuleLangParser.SATISFIES:
                this.enterOuterAlt(localContext, 6);
                {
                this.state = 432;
                this.match(RuleLangParser.SATISFIES);
                }
                break;
            case RuleLangParser.IS:
                this.enterOuterAlt(localContext, 7);
                {
                this.state = 433;
                this.match(RuleLangParser.IS);
                this.state = 434;
                _la = this.tokenStream.LA(1);
                if(!(((((_la - 57)) & ~0x1F) === 0 && ((1 << (_la - 57)) & 4244635649) !== 0))) {
                this.errorHandler.recoverInline(this);
                }
                else {
                    this.errorHandler.reportMatch(this);
                    this.consume();
                }
                }
                break;
            case RuleLangParser.HAS:
                this.enterOuterAlt(localContext, 8);
                {
                this.state = 435;
                this.match(RuleLangParser.HAS);
                this.state = 436;
                this.match(RuleLangParser.PASSED);
                }
                break;
            default:
                throw new antlr.NoViableAltException(this);
            }
        }
        catch (re) {
            if (re instanceof antlr.RecognitionException) {
                this.errorHandler.reportError(this, re);
                this.errorHandler.recover(this, re);
            } else {
                throw re;
            }
        }
        finally {
            this.exitRule();
        }
        return localContext;
    }
    public keyword(): KeywordContext {
        let localContext = new KeywordContext(this.context, this.state);
        this.enterRule(localContext, 50, RuleLangParser.RULE_keyword);
        let _la: number;
        try {
            this.enterOuterAlt(localContext, 1);
            {
            this.state = 439;
            _la = this.tokenStream.LA(1);
            if(!(((((_la - 22)) & ~0x1F) === 0 && ((1 << (_la - 22)) & 4294967239) !== 0) || ((((_la - 54)) & ~0x1F) === 0 && ((1 << (_la - 54)) & 4294967295) !== 0) || ((((_la - 86)) & ~0x1F) === 0 && ((1 << (_la - 86)) & 4095) !== 0))) {
            this.errorHandler.recoverInline(this);
            }
            else {
                this.errorHandler.reportMatch(this);
                this.consume();
            }
            }
        }
        catch (re) {
            if (re instanceof antlr.RecognitionException) {
                this.errorHandler.reportError(this, re);
                this.errorHandler.recover(this, re);
            } else {
                throw re;
            }
        }
        finally {
            this.exitRule();
        }
        return localContext;
    }

    public static readonly _serializedATN: number[] = [
        4,1,101,442,2,0,7,0,2,1,7,1,2,2,7,2,2,3,7,3,2,4,7,4,2,5,7,5,2,6,
        7,6,2,7,7,7,2,8,7,8,2,9,7,9,2,10,7,10,2,11,7,11,2,12,7,12,2,13,7,
        13,2,14,7,14,2,15,7,15,2,16,7,16,2,17,7,17,2,18,7,18,2,19,7,19,2,
        20,7,20,2,21,7,21,2,22,7,22,2,23,7,23,2,24,7,24,2,25,7,25,1,0,5,
        0,54,8,0,10,0,12,0,57,9,0,1,0,1,0,1,1,1,1,3,1,63,8,1,1,2,1,2,1,2,
        3,2,68,8,2,1,2,1,2,1,2,1,2,1,2,1,2,1,2,1,3,1,3,1,3,3,3,80,8,3,1,
        3,1,3,1,3,1,3,1,3,1,3,1,4,1,4,1,5,1,5,1,5,1,5,3,5,94,8,5,1,6,4,6,
        97,8,6,11,6,12,6,98,1,7,1,7,1,7,1,7,1,7,3,7,106,8,7,1,8,1,8,1,8,
        1,8,5,8,112,8,8,10,8,12,8,115,9,8,1,9,1,9,1,10,1,10,1,10,1,10,3,
        10,123,8,10,1,10,1,10,3,10,127,8,10,1,10,3,10,130,8,10,1,10,3,10,
        133,8,10,1,10,1,10,4,10,137,8,10,11,10,12,10,138,1,10,3,10,142,8,
        10,1,10,1,10,3,10,146,8,10,1,10,3,10,149,8,10,1,10,1,10,1,10,1,10,
        1,10,1,10,3,10,157,8,10,1,10,3,10,160,8,10,1,10,1,10,1,10,3,10,165,
        8,10,1,10,1,10,1,10,3,10,170,8,10,1,10,3,10,173,8,10,1,10,3,10,176,
        8,10,1,10,1,10,1,10,3,10,181,8,10,1,10,3,10,184,8,10,3,10,186,8,
        10,1,11,1,11,1,11,3,11,191,8,11,1,12,1,12,1,12,1,13,1,13,1,13,3,
        13,199,8,13,1,14,1,14,1,14,1,14,5,14,205,8,14,10,14,12,14,208,9,
        14,1,15,1,15,1,16,3,16,213,8,16,1,16,1,16,3,16,217,8,16,1,17,1,17,
        3,17,221,8,17,1,18,1,18,3,18,225,8,18,1,18,1,18,1,18,1,18,1,18,1,
        18,1,18,3,18,234,8,18,1,18,1,18,1,18,1,18,3,18,240,8,18,1,18,1,18,
        1,18,1,18,3,18,246,8,18,1,18,1,18,1,18,1,18,1,18,1,18,1,18,3,18,
        255,8,18,1,18,1,18,1,18,1,18,1,18,1,18,1,18,1,18,3,18,265,8,18,1,
        18,1,18,1,18,1,18,1,18,3,18,272,8,18,1,18,1,18,1,18,3,18,277,8,18,
        1,18,1,18,1,18,1,18,3,18,283,8,18,1,18,1,18,1,18,1,18,1,18,3,18,
        290,8,18,1,18,1,18,1,18,3,18,295,8,18,1,18,1,18,1,18,1,18,1,18,1,
        18,3,18,303,8,18,1,18,1,18,1,18,1,18,1,18,3,18,310,8,18,1,18,1,18,
        1,18,1,18,1,18,3,18,317,8,18,1,18,1,18,1,18,1,18,1,18,3,18,324,8,
        18,1,18,1,18,1,18,3,18,329,8,18,1,18,1,18,1,18,3,18,334,8,18,1,18,
        1,18,1,18,1,18,3,18,340,8,18,1,18,1,18,1,18,1,18,3,18,346,8,18,1,
        18,1,18,1,18,1,18,3,18,352,8,18,1,18,1,18,1,18,1,18,1,18,1,18,1,
        18,1,18,1,18,1,18,1,18,1,18,1,18,1,18,1,18,1,18,1,18,1,18,1,18,1,
        18,1,18,1,18,1,18,1,18,1,18,1,18,1,18,1,18,1,18,1,18,1,18,1,18,1,
        18,3,18,387,8,18,1,19,1,19,1,19,1,19,3,19,393,8,19,1,19,3,19,396,
        8,19,1,20,1,20,1,20,1,20,1,20,1,20,1,20,1,20,1,20,3,20,407,8,20,
        1,21,1,21,1,21,1,21,5,21,413,8,21,10,21,12,21,416,9,21,3,21,418,
        8,21,1,21,1,21,1,22,1,22,1,22,1,23,1,23,1,24,1,24,1,24,1,24,1,24,
        1,24,1,24,1,24,1,24,1,24,1,24,3,24,438,8,24,1,25,1,25,1,25,0,0,26,
        0,2,4,6,8,10,12,14,16,18,20,22,24,26,28,30,32,34,36,38,40,42,44,
        46,48,50,0,10,1,0,22,24,1,0,26,27,1,0,31,32,1,0,33,34,1,0,39,40,
        1,0,28,29,1,0,1,2,1,0,89,97,3,0,57,57,81,81,83,88,2,0,22,24,28,97,
        531,0,55,1,0,0,0,2,62,1,0,0,0,4,67,1,0,0,0,6,79,1,0,0,0,8,87,1,0,
        0,0,10,93,1,0,0,0,12,96,1,0,0,0,14,105,1,0,0,0,16,107,1,0,0,0,18,
        116,1,0,0,0,20,185,1,0,0,0,22,190,1,0,0,0,24,192,1,0,0,0,26,198,
        1,0,0,0,28,200,1,0,0,0,30,209,1,0,0,0,32,216,1,0,0,0,34,218,1,0,
        0,0,36,386,1,0,0,0,38,395,1,0,0,0,40,406,1,0,0,0,42,408,1,0,0,0,
        44,421,1,0,0,0,46,424,1,0,0,0,48,437,1,0,0,0,50,439,1,0,0,0,52,54,
        3,2,1,0,53,52,1,0,0,0,54,57,1,0,0,0,55,53,1,0,0,0,55,56,1,0,0,0,
        56,58,1,0,0,0,57,55,1,0,0,0,58,59,5,0,0,1,59,1,1,0,0,0,60,63,3,4,
        2,0,61,63,3,6,3,0,62,60,1,0,0,0,62,61,1,0,0,0,63,3,1,0,0,0,64,65,
        3,10,5,0,65,66,5,15,0,0,66,68,1,0,0,0,67,64,1,0,0,0,67,68,1,0,0,
        0,68,69,1,0,0,0,69,70,3,8,4,0,70,71,5,1,0,0,71,72,3,12,6,0,72,73,
        5,25,0,0,73,74,3,16,8,0,74,75,5,15,0,0,75,5,1,0,0,0,76,77,3,10,5,
        0,77,78,5,17,0,0,78,80,1,0,0,0,79,76,1,0,0,0,79,80,1,0,0,0,80,81,
        1,0,0,0,81,82,5,25,0,0,82,83,3,16,8,0,83,84,5,14,0,0,84,85,3,12,
        6,0,85,86,5,15,0,0,86,7,1,0,0,0,87,88,7,0,0,0,88,9,1,0,0,0,89,94,
        5,98,0,0,90,94,5,5,0,0,91,94,5,6,0,0,92,94,3,50,25,0,93,89,1,0,0,
        0,93,90,1,0,0,0,93,91,1,0,0,0,93,92,1,0,0,0,94,11,1,0,0,0,95,97,
        3,14,7,0,96,95,1,0,0,0,97,98,1,0,0,0,98,96,1,0,0,0,98,99,1,0,0,0,
        99,13,1,0,0,0,100,106,5,98,0,0,101,106,5,5,0,0,102,106,3,50,25,0,
        103,106,5,26,0,0,104,106,5,27,0,0,105,100,1,0,0,0,105,101,1,0,0,
        0,105,102,1,0,0,0,105,103,1,0,0,0,105,104,1,0,0,0,106,15,1,0,0,0,
        107,113,3,20,10,0,108,109,3,18,9,0,109,110,3,20,10,0,110,112,1,0,
        0,0,111,108,1,0,0,0,112,115,1,0,0,0,113,111,1,0,0,0,113,114,1,0,
        0,0,114,17,1,0,0,0,115,113,1,0,0,0,116,117,7,1,0,0,117,19,1,0,0,
        0,118,119,5,18,0,0,119,120,3,16,8,0,120,122,5,19,0,0,121,123,3,24,
        12,0,122,121,1,0,0,0,122,123,1,0,0,0,123,186,1,0,0,0,124,126,5,7,
        0,0,125,127,3,48,24,0,126,125,1,0,0,0,126,127,1,0,0,0,127,129,1,
        0,0,0,128,130,3,24,12,0,129,128,1,0,0,0,129,130,1,0,0,0,130,186,
        1,0,0,0,131,133,5,24,0,0,132,131,1,0,0,0,132,133,1,0,0,0,133,134,
        1,0,0,0,134,136,5,1,0,0,135,137,3,22,11,0,136,135,1,0,0,0,137,138,
        1,0,0,0,138,136,1,0,0,0,138,139,1,0,0,0,139,141,1,0,0,0,140,142,
        3,24,12,0,141,140,1,0,0,0,141,142,1,0,0,0,142,186,1,0,0,0,143,145,
        7,2,0,0,144,146,5,28,0,0,145,144,1,0,0,0,145,146,1,0,0,0,146,148,
        1,0,0,0,147,149,5,24,0,0,148,147,1,0,0,0,148,149,1,0,0,0,149,150,
        1,0,0,0,150,151,3,26,13,0,151,152,7,3,0,0,152,153,5,18,0,0,153,154,
        3,16,8,0,154,156,5,19,0,0,155,157,3,24,12,0,156,155,1,0,0,0,156,
        157,1,0,0,0,157,186,1,0,0,0,158,160,5,24,0,0,159,158,1,0,0,0,159,
        160,1,0,0,0,160,161,1,0,0,0,161,162,7,4,0,0,162,164,5,28,0,0,163,
        165,5,24,0,0,164,163,1,0,0,0,164,165,1,0,0,0,165,166,1,0,0,0,166,
        167,3,26,13,0,167,169,3,36,18,0,168,170,3,38,19,0,169,168,1,0,0,
        0,169,170,1,0,0,0,170,172,1,0,0,0,171,173,3,24,12,0,172,171,1,0,
        0,0,172,173,1,0,0,0,173,186,1,0,0,0,174,176,5,24,0,0,175,174,1,0,
        0,0,175,176,1,0,0,0,176,177,1,0,0,0,177,178,3,26,13,0,178,180,3,
        36,18,0,179,181,3,38,19,0,180,179,1,0,0,0,180,181,1,0,0,0,181,183,
        1,0,0,0,182,184,3,24,12,0,183,182,1,0,0,0,183,184,1,0,0,0,184,186,
        1,0,0,0,185,118,1,0,0,0,185,124,1,0,0,0,185,132,1,0,0,0,185,143,
        1,0,0,0,185,159,1,0,0,0,185,175,1,0,0,0,186,21,1,0,0,0,187,191,5,
        98,0,0,188,191,5,5,0,0,189,191,3,50,25,0,190,187,1,0,0,0,190,188,
        1,0,0,0,190,189,1,0,0,0,191,23,1,0,0,0,192,193,5,25,0,0,193,194,
        5,35,0,0,194,25,1,0,0,0,195,199,3,28,14,0,196,199,5,6,0,0,197,199,
        3,34,17,0,198,195,1,0,0,0,198,196,1,0,0,0,198,197,1,0,0,0,199,27,
        1,0,0,0,200,206,5,2,0,0,201,202,3,30,15,0,202,203,3,32,16,0,203,
        205,1,0,0,0,204,201,1,0,0,0,205,208,1,0,0,0,206,204,1,0,0,0,206,
        207,1,0,0,0,207,29,1,0,0,0,208,206,1,0,0,0,209,210,7,5,0,0,210,31,
        1,0,0,0,211,213,5,24,0,0,212,211,1,0,0,0,212,213,1,0,0,0,213,214,
        1,0,0,0,214,217,7,6,0,0,215,217,3,34,17,0,216,212,1,0,0,0,216,215,
        1,0,0,0,217,33,1,0,0,0,218,220,5,30,0,0,219,221,5,2,0,0,220,219,
        1,0,0,0,220,221,1,0,0,0,221,35,1,0,0,0,222,224,5,41,0,0,223,225,
        5,42,0,0,224,223,1,0,0,0,224,225,1,0,0,0,225,226,1,0,0,0,226,227,
        5,43,0,0,227,228,5,44,0,0,228,229,5,27,0,0,229,230,5,45,0,0,230,
        387,5,46,0,0,231,233,5,41,0,0,232,234,5,42,0,0,233,232,1,0,0,0,233,
        234,1,0,0,0,234,235,1,0,0,0,235,236,5,43,0,0,236,387,5,44,0,0,237,
        239,5,41,0,0,238,240,5,42,0,0,239,238,1,0,0,0,239,240,1,0,0,0,240,
        241,1,0,0,0,241,242,5,47,0,0,242,387,5,48,0,0,243,245,5,41,0,0,244,
        246,5,42,0,0,245,244,1,0,0,0,245,246,1,0,0,0,246,247,1,0,0,0,247,
        248,5,49,0,0,248,249,5,44,0,0,249,250,5,27,0,0,250,251,5,45,0,0,
        251,387,5,46,0,0,252,254,5,41,0,0,253,255,5,42,0,0,254,253,1,0,0,
        0,254,255,1,0,0,0,255,256,1,0,0,0,256,257,5,49,0,0,257,387,5,44,
        0,0,258,259,5,41,0,0,259,260,5,50,0,0,260,261,5,51,0,0,261,387,5,
        44,0,0,262,264,5,41,0,0,263,265,5,42,0,0,264,263,1,0,0,0,264,265,
        1,0,0,0,265,266,1,0,0,0,266,267,5,52,0,0,267,268,5,45,0,0,268,387,
        5,46,0,0,269,271,5,41,0,0,270,272,5,42,0,0,271,270,1,0,0,0,271,272,
        1,0,0,0,272,273,1,0,0,0,273,387,5,52,0,0,274,276,5,41,0,0,275,277,
        5,42,0,0,276,275,1,0,0,0,276,277,1,0,0,0,277,278,1,0,0,0,278,279,
        5,45,0,0,279,387,5,46,0,0,280,282,5,41,0,0,281,283,5,42,0,0,282,
        281,1,0,0,0,282,283,1,0,0,0,283,284,1,0,0,0,284,285,5,24,0,0,285,
        286,5,53,0,0,286,387,5,54,0,0,287,289,5,41,0,0,288,290,5,42,0,0,
        289,288,1,0,0,0,289,290,1,0,0,0,290,291,1,0,0,0,291,387,5,29,0,0,
        292,294,5,41,0,0,293,295,5,42,0,0,294,293,1,0,0,0,294,295,1,0,0,
        0,295,296,1,0,0,0,296,297,5,22,0,0,297,298,5,57,0,0,298,299,5,58,
        0,0,299,387,5,59,0,0,300,302,5,41,0,0,301,303,5,42,0,0,302,301,1,
        0,0,0,302,303,1,0,0,0,303,304,1,0,0,0,304,305,5,22,0,0,305,306,5,
        57,0,0,306,387,5,58,0,0,307,309,5,41,0,0,308,310,5,42,0,0,309,308,
        1,0,0,0,309,310,1,0,0,0,310,311,1,0,0,0,311,312,5,22,0,0,312,313,
        5,57,0,0,313,387,5,60,0,0,314,316,5,41,0,0,315,317,5,42,0,0,316,
        315,1,0,0,0,316,317,1,0,0,0,317,318,1,0,0,0,318,319,5,22,0,0,319,
        320,5,57,0,0,320,387,5,38,0,0,321,323,5,41,0,0,322,324,5,42,0,0,
        323,322,1,0,0,0,323,324,1,0,0,0,324,325,1,0,0,0,325,387,5,61,0,0,
        326,328,5,41,0,0,327,329,5,42,0,0,328,327,1,0,0,0,328,329,1,0,0,
        0,329,330,1,0,0,0,330,387,5,62,0,0,331,333,5,41,0,0,332,334,5,42,
        0,0,333,332,1,0,0,0,333,334,1,0,0,0,334,335,1,0,0,0,335,336,5,63,
        0,0,336,387,5,44,0,0,337,339,5,41,0,0,338,340,5,42,0,0,339,338,1,
        0,0,0,339,340,1,0,0,0,340,341,1,0,0,0,341,342,5,64,0,0,342,387,5,
        44,0,0,343,345,5,41,0,0,344,346,5,42,0,0,345,344,1,0,0,0,345,346,
        1,0,0,0,346,347,1,0,0,0,347,348,5,65,0,0,348,387,5,44,0,0,349,351,
        5,41,0,0,350,352,5,42,0,0,351,350,1,0,0,0,351,352,1,0,0,0,352,353,
        1,0,0,0,353,354,5,66,0,0,354,387,5,44,0,0,355,356,5,41,0,0,356,387,
        5,42,0,0,357,387,5,41,0,0,358,387,5,55,0,0,359,360,5,56,0,0,360,
        361,5,42,0,0,361,387,5,45,0,0,362,387,5,67,0,0,363,364,5,56,0,0,
        364,365,5,42,0,0,365,387,5,68,0,0,366,367,5,69,0,0,367,368,5,24,
        0,0,368,387,5,71,0,0,369,370,5,56,0,0,370,371,5,42,0,0,371,372,5,
        70,0,0,372,373,5,24,0,0,373,387,5,71,0,0,374,375,5,72,0,0,375,387,
        5,74,0,0,376,377,5,56,0,0,377,378,5,42,0,0,378,379,5,73,0,0,379,
        387,5,74,0,0,380,387,5,8,0,0,381,387,5,12,0,0,382,387,5,9,0,0,383,
        387,5,13,0,0,384,387,5,10,0,0,385,387,5,11,0,0,386,222,1,0,0,0,386,
        231,1,0,0,0,386,237,1,0,0,0,386,243,1,0,0,0,386,252,1,0,0,0,386,
        258,1,0,0,0,386,262,1,0,0,0,386,269,1,0,0,0,386,274,1,0,0,0,386,
        280,1,0,0,0,386,287,1,0,0,0,386,292,1,0,0,0,386,300,1,0,0,0,386,
        307,1,0,0,0,386,314,1,0,0,0,386,321,1,0,0,0,386,326,1,0,0,0,386,
        331,1,0,0,0,386,337,1,0,0,0,386,343,1,0,0,0,386,349,1,0,0,0,386,
        355,1,0,0,0,386,357,1,0,0,0,386,358,1,0,0,0,386,359,1,0,0,0,386,
        362,1,0,0,0,386,363,1,0,0,0,386,366,1,0,0,0,386,369,1,0,0,0,386,
        374,1,0,0,0,386,376,1,0,0,0,386,380,1,0,0,0,386,381,1,0,0,0,386,
        382,1,0,0,0,386,383,1,0,0,0,386,384,1,0,0,0,386,385,1,0,0,0,387,
        37,1,0,0,0,388,396,3,44,22,0,389,396,3,40,20,0,390,396,3,42,21,0,
        391,393,5,24,0,0,392,391,1,0,0,0,392,393,1,0,0,0,393,394,1,0,0,0,
        394,396,3,26,13,0,395,388,1,0,0,0,395,389,1,0,0,0,395,390,1,0,0,
        0,395,392,1,0,0,0,396,39,1,0,0,0,397,407,5,3,0,0,398,407,5,5,0,0,
        399,407,5,36,0,0,400,407,5,37,0,0,401,407,5,4,0,0,402,403,5,38,0,
        0,403,404,5,18,0,0,404,405,5,4,0,0,405,407,5,19,0,0,406,397,1,0,
        0,0,406,398,1,0,0,0,406,399,1,0,0,0,406,400,1,0,0,0,406,401,1,0,
        0,0,406,402,1,0,0,0,407,41,1,0,0,0,408,417,5,20,0,0,409,414,3,40,
        20,0,410,411,5,16,0,0,411,413,3,40,20,0,412,410,1,0,0,0,413,416,
        1,0,0,0,414,412,1,0,0,0,414,415,1,0,0,0,415,418,1,0,0,0,416,414,
        1,0,0,0,417,409,1,0,0,0,417,418,1,0,0,0,418,419,1,0,0,0,419,420,
        5,21,0,0,420,43,1,0,0,0,421,422,5,5,0,0,422,423,3,46,23,0,423,45,
        1,0,0,0,424,425,7,7,0,0,425,47,1,0,0,0,426,427,5,79,0,0,427,438,
        5,80,0,0,428,438,5,75,0,0,429,438,5,76,0,0,430,438,5,77,0,0,431,
        438,5,78,0,0,432,438,5,34,0,0,433,434,5,41,0,0,434,438,7,8,0,0,435,
        436,5,69,0,0,436,438,5,82,0,0,437,426,1,0,0,0,437,428,1,0,0,0,437,
        429,1,0,0,0,437,430,1,0,0,0,437,431,1,0,0,0,437,432,1,0,0,0,437,
        433,1,0,0,0,437,435,1,0,0,0,438,49,1,0,0,0,439,440,7,9,0,0,440,51,
        1,0,0,0,58,55,62,67,79,93,98,105,113,122,126,129,132,138,141,145,
        148,156,159,164,169,172,175,180,183,185,190,198,206,212,216,220,
        224,233,239,245,254,264,271,276,282,289,294,302,309,316,323,328,
        333,339,345,351,386,392,395,406,414,417,437
    ];

    private static __ATN: antlr.ATN;
    public static get _ATN(): antlr.ATN {
        if (!RuleLangParser.__ATN) {
            RuleLangParser.__ATN = new antlr.ATNDeserializer().deserialize(RuleLangParser._serializedATN);
        }

        return RuleLangParser.__ATN;
    }


    private static readonly vocabulary = new antlr.Vocabulary(RuleLangParser.literalNames, RuleLangParser.symbolicNames, []);

    public override get vocabulary(): antlr.Vocabulary {
        return RuleLangParser.vocabulary;
    }

    private static readonly decisionsToDFA = RuleLangParser._ATN.decisionToState.map( (ds: antlr.DecisionState, index: number) => new antlr.DFA(ds, index) );
}

export class PolicyContext extends antlr.ParserRuleContext {
    public constructor(parent: antlr.ParserRuleContext | null, invokingState: number) {
        super(parent, invokingState);
    }
    public EOF(): antlr.TerminalNode {
        return this.getToken(RuleLangParser.EOF, 0)!;
    }
    public statement(): StatementContext[];
    public statement(i: number): StatementContext | null;
    public statement(i?: number): StatementContext[] | StatementContext | null {
        if (i === undefined) {
            return this.getRuleContexts(StatementContext);
        }

        return this.getRuleContext(i, StatementContext);
    }
    public override get ruleIndex(): number {
        return RuleLangParser.RULE_policy;
    }
}


export class StatementContext extends antlr.ParserRuleContext {
    public constructor(parent: antlr.ParserRuleContext | null, invokingState: number) {
        super(parent, invokingState);
    }
    public verboseRule(): VerboseRuleContext | null {
        return this.getRuleContext(0, VerboseRuleContext);
    }
    public shorthandRule(): ShorthandRuleContext | null {
        return this.getRuleContext(0, ShorthandRuleContext);
    }
    public override get ruleIndex(): number {
        return RuleLangParser.RULE_statement;
    }
}


export class VerboseRuleContext extends antlr.ParserRuleContext {
    public constructor(parent: antlr.ParserRuleContext | null, invokingState: number) {
        super(parent, invokingState);
    }
    public article(): ArticleContext {
        return this.getRuleContext(0, ArticleContext)!;
    }
    public SELECTOR(): antlr.TerminalNode {
        return this.getToken(RuleLangParser.SELECTOR, 0)!;
    }
    public outcome(): OutcomeContext {
        return this.getRuleContext(0, OutcomeContext)!;
    }
    public IF(): antlr.TerminalNode {
        return this.getToken(RuleLangParser.IF, 0)!;
    }
    public conditions(): ConditionsContext {
        return this.getRuleContext(0, ConditionsContext)!;
    }
    public DOT(): antlr.TerminalNode[];
    public DOT(i: number): antlr.TerminalNode | null;
    public DOT(i?: number): antlr.TerminalNode | null | antlr.TerminalNode[] {
    	if (i === undefined) {
    		return this.getTokens(RuleLangParser.DOT);
    	} else {
    		return this.getToken(RuleLangParser.DOT, i);
    	}
    }
    public labelName(): LabelNameContext | null {
        return this.getRuleContext(0, LabelNameContext);
    }
    public override get ruleIndex(): number {
        return RuleLangParser.RULE_verboseRule;
    }
}


export class ShorthandRuleContext extends antlr.ParserRuleContext {
    public constructor(parent: antlr.ParserRuleContext | null, invokingState: number) {
        super(parent, invokingState);
    }
    public IF(): antlr.TerminalNode {
        return this.getToken(RuleLangParser.IF, 0)!;
    }
    public conditions(): ConditionsContext {
        return this.getRuleContext(0, ConditionsContext)!;
    }
    public ARROW(): antlr.TerminalNode {
        return this.getToken(RuleLangParser.ARROW, 0)!;
    }
    public outcome(): OutcomeContext {
        return this.getRuleContext(0, OutcomeContext)!;
    }
    public DOT(): antlr.TerminalNode {
        return this.getToken(RuleLangParser.DOT, 0)!;
    }
    public labelName(): LabelNameContext | null {
        return this.getRuleContext(0, LabelNameContext);
    }
    public COLON(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.COLON, 0);
    }
    public override get ruleIndex(): number {
        return RuleLangParser.RULE_shorthandRule;
    }
}


export class ArticleContext extends antlr.ParserRuleContext {
    public constructor(parent: antlr.ParserRuleContext | null, invokingState: number) {
        super(parent, invokingState);
    }
    public A(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.A, 0);
    }
    public AN(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.AN, 0);
    }
    public THE(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.THE, 0);
    }
    public override get ruleIndex(): number {
        return RuleLangParser.RULE_article;
    }
}


export class LabelNameContext extends antlr.ParserRuleContext {
    public constructor(parent: antlr.ParserRuleContext | null, invokingState: number) {
        super(parent, invokingState);
    }
    public WORD(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.WORD, 0);
    }
    public NUMBER(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.NUMBER, 0);
    }
    public DOTTED(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.DOTTED, 0);
    }
    public keyword(): KeywordContext | null {
        return this.getRuleContext(0, KeywordContext);
    }
    public override get ruleIndex(): number {
        return RuleLangParser.RULE_labelName;
    }
}


export class OutcomeContext extends antlr.ParserRuleContext {
    public constructor(parent: antlr.ParserRuleContext | null, invokingState: number) {
        super(parent, invokingState);
    }
    public outcomeWord(): OutcomeWordContext[];
    public outcomeWord(i: number): OutcomeWordContext | null;
    public outcomeWord(i?: number): OutcomeWordContext[] | OutcomeWordContext | null {
        if (i === undefined) {
            return this.getRuleContexts(OutcomeWordContext);
        }

        return this.getRuleContext(i, OutcomeWordContext);
    }
    public override get ruleIndex(): number {
        return RuleLangParser.RULE_outcome;
    }
}


export class OutcomeWordContext extends antlr.ParserRuleContext {
    public constructor(parent: antlr.ParserRuleContext | null, invokingState: number) {
        super(parent, invokingState);
    }
    public WORD(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.WORD, 0);
    }
    public NUMBER(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.NUMBER, 0);
    }
    public keyword(): KeywordContext | null {
        return this.getRuleContext(0, KeywordContext);
    }
    public AND(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.AND, 0);
    }
    public OR(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.OR, 0);
    }
    public override get ruleIndex(): number {
        return RuleLangParser.RULE_outcomeWord;
    }
}


export class ConditionsContext extends antlr.ParserRuleContext {
    public constructor(parent: antlr.ParserRuleContext | null, invokingState: number) {
        super(parent, invokingState);
    }
    public condition(): ConditionContext[];
    public condition(i: number): ConditionContext | null;
    public condition(i?: number): ConditionContext[] | ConditionContext | null {
        if (i === undefined) {
            return this.getRuleContexts(ConditionContext);
        }

        return this.getRuleContext(i, ConditionContext);
    }
    public logicalOp(): LogicalOpContext[];
    public logicalOp(i: number): LogicalOpContext | null;
    public logicalOp(i?: number): LogicalOpContext[] | LogicalOpContext | null {
        if (i === undefined) {
            return this.getRuleContexts(LogicalOpContext);
        }

        return this.getRuleContext(i, LogicalOpContext);
    }
    public override get ruleIndex(): number {
        return RuleLangParser.RULE_conditions;
    }
}


export class LogicalOpContext extends antlr.ParserRuleContext {
    public constructor(parent: antlr.ParserRuleContext | null, invokingState: number) {
        super(parent, invokingState);
    }
    public AND(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.AND, 0);
    }
    public OR(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.OR, 0);
    }
    public override get ruleIndex(): number {
        return RuleLangParser.RULE_logicalOp;
    }
}


export class ConditionContext extends antlr.ParserRuleContext {
    public constructor(parent: antlr.ParserRuleContext | null, invokingState: number) {
        super(parent, invokingState);
    }
    public override get ruleIndex(): number {
        return RuleLangParser.RULE_condition;
    }
    public override copyFrom(ctx: ConditionContext): void {
        super.copyFrom(ctx);
    }
}
export class GroupConditionContext extends ConditionContext {
    public constructor(ctx: ConditionContext) {
        super(ctx.parent, ctx.invokingState);
        super.copyFrom(ctx);
    }
    public LPAREN(): antlr.TerminalNode {
        return this.getToken(RuleLangParser.LPAREN, 0)!;
    }
    public conditions(): ConditionsContext {
        return this.getRuleContext(0, ConditionsContext)!;
    }
    public RPAREN(): antlr.TerminalNode {
        return this.getToken(RuleLangParser.RPAREN, 0)!;
    }
    public presence(): PresenceContext | null {
        return this.getRuleContext(0, PresenceContext);
    }
}
export class QuantifiedConditionContext extends ConditionContext {
    public _quantifier?: Token | null;
    public constructor(ctx: ConditionContext) {
        super(ctx.parent, ctx.invokingState);
        super.copyFrom(ctx);
    }
    public path(): PathContext {
        return this.getRuleContext(0, PathContext)!;
    }
    public LPAREN(): antlr.TerminalNode {
        return this.getToken(RuleLangParser.LPAREN, 0)!;
    }
    public conditions(): ConditionsContext {
        return this.getRuleContext(0, ConditionsContext)!;
    }
    public RPAREN(): antlr.TerminalNode {
        return this.getToken(RuleLangParser.RPAREN, 0)!;
    }
    public WHERE(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.WHERE, 0);
    }
    public SATISFIES(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.SATISFIES, 0);
    }
    public ANY(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.ANY, 0);
    }
    public ALL(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.ALL, 0);
    }
    public OF(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.OF, 0);
    }
    public THE(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.THE, 0);
    }
    public presence(): PresenceContext | null {
        return this.getRuleContext(0, PresenceContext);
    }
}
export class RuleRefConditionContext extends ConditionContext {
    public constructor(ctx: ConditionContext) {
        super(ctx.parent, ctx.invokingState);
        super.copyFrom(ctx);
    }
    public SELECTOR(): antlr.TerminalNode {
        return this.getToken(RuleLangParser.SELECTOR, 0)!;
    }
    public THE(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.THE, 0);
    }
    public refWord(): RefWordContext[];
    public refWord(i: number): RefWordContext | null;
    public refWord(i?: number): RefWordContext[] | RefWordContext | null {
        if (i === undefined) {
            return this.getRuleContexts(RefWordContext);
        }

        return this.getRuleContext(i, RefWordContext);
    }
    public presence(): PresenceContext | null {
        return this.getRuleContext(0, PresenceContext);
    }
}
export class MeasuredConditionContext extends ConditionContext {
    public _measure?: Token | null;
    public constructor(ctx: ConditionContext) {
        super(ctx.parent, ctx.invokingState);
        super.copyFrom(ctx);
    }
    public OF(): antlr.TerminalNode {
        return this.getToken(RuleLangParser.OF, 0)!;
    }
    public path(): PathContext {
        return this.getRuleContext(0, PathContext)!;
    }
    public operator(): OperatorContext {
        return this.getRuleContext(0, OperatorContext)!;
    }
    public LENGTH(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.LENGTH, 0);
    }
    public NUMBER_KW(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.NUMBER_KW, 0);
    }
    public THE(): antlr.TerminalNode[];
    public THE(i: number): antlr.TerminalNode | null;
    public THE(i?: number): antlr.TerminalNode | null | antlr.TerminalNode[] {
    	if (i === undefined) {
    		return this.getTokens(RuleLangParser.THE);
    	} else {
    		return this.getToken(RuleLangParser.THE, i);
    	}
    }
    public operand(): OperandContext | null {
        return this.getRuleContext(0, OperandContext);
    }
    public presence(): PresenceContext | null {
        return this.getRuleContext(0, PresenceContext);
    }
}
export class ComparisonConditionContext extends ConditionContext {
    public constructor(ctx: ConditionContext) {
        super(ctx.parent, ctx.invokingState);
        super.copyFrom(ctx);
    }
    public path(): PathContext {
        return this.getRuleContext(0, PathContext)!;
    }
    public operator(): OperatorContext {
        return this.getRuleContext(0, OperatorContext)!;
    }
    public THE(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.THE, 0);
    }
    public operand(): OperandContext | null {
        return this.getRuleContext(0, OperandContext);
    }
    public presence(): PresenceContext | null {
        return this.getRuleContext(0, PresenceContext);
    }
}
export class LabelConditionContext extends ConditionContext {
    public constructor(ctx: ConditionContext) {
        super(ctx.parent, ctx.invokingState);
        super.copyFrom(ctx);
    }
    public LABEL_REF(): antlr.TerminalNode {
        return this.getToken(RuleLangParser.LABEL_REF, 0)!;
    }
    public labelPredicate(): LabelPredicateContext | null {
        return this.getRuleContext(0, LabelPredicateContext);
    }
    public presence(): PresenceContext | null {
        return this.getRuleContext(0, PresenceContext);
    }
}


export class RefWordContext extends antlr.ParserRuleContext {
    public constructor(parent: antlr.ParserRuleContext | null, invokingState: number) {
        super(parent, invokingState);
    }
    public WORD(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.WORD, 0);
    }
    public NUMBER(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.NUMBER, 0);
    }
    public keyword(): KeywordContext | null {
        return this.getRuleContext(0, KeywordContext);
    }
    public override get ruleIndex(): number {
        return RuleLangParser.RULE_refWord;
    }
}


export class PresenceContext extends antlr.ParserRuleContext {
    public constructor(parent: antlr.ParserRuleContext | null, invokingState: number) {
        super(parent, invokingState);
    }
    public IF(): antlr.TerminalNode {
        return this.getToken(RuleLangParser.IF, 0)!;
    }
    public PRESENT(): antlr.TerminalNode {
        return this.getToken(RuleLangParser.PRESENT, 0)!;
    }
    public override get ruleIndex(): number {
        return RuleLangParser.RULE_presence;
    }
}


export class PathContext extends antlr.ParserRuleContext {
    public constructor(parent: antlr.ParserRuleContext | null, invokingState: number) {
        super(parent, invokingState);
    }
    public naturalPath(): NaturalPathContext | null {
        return this.getRuleContext(0, NaturalPathContext);
    }
    public DOTTED(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.DOTTED, 0);
    }
    public itsPath(): ItsPathContext | null {
        return this.getRuleContext(0, ItsPathContext);
    }
    public override get ruleIndex(): number {
        return RuleLangParser.RULE_path;
    }
}


export class NaturalPathContext extends antlr.ParserRuleContext {
    public constructor(parent: antlr.ParserRuleContext | null, invokingState: number) {
        super(parent, invokingState);
    }
    public PROPERTY(): antlr.TerminalNode {
        return this.getToken(RuleLangParser.PROPERTY, 0)!;
    }
    public link(): LinkContext[];
    public link(i: number): LinkContext | null;
    public link(i?: number): LinkContext[] | LinkContext | null {
        if (i === undefined) {
            return this.getRuleContexts(LinkContext);
        }

        return this.getRuleContext(i, LinkContext);
    }
    public pathStep(): PathStepContext[];
    public pathStep(i: number): PathStepContext | null;
    public pathStep(i?: number): PathStepContext[] | PathStepContext | null {
        if (i === undefined) {
            return this.getRuleContexts(PathStepContext);
        }

        return this.getRuleContext(i, PathStepContext);
    }
    public override get ruleIndex(): number {
        return RuleLangParser.RULE_naturalPath;
    }
}


export class LinkContext extends antlr.ParserRuleContext {
    public constructor(parent: antlr.ParserRuleContext | null, invokingState: number) {
        super(parent, invokingState);
    }
    public OF(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.OF, 0);
    }
    public IN(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.IN, 0);
    }
    public override get ruleIndex(): number {
        return RuleLangParser.RULE_link;
    }
}


export class PathStepContext extends antlr.ParserRuleContext {
    public constructor(parent: antlr.ParserRuleContext | null, invokingState: number) {
        super(parent, invokingState);
    }
    public PROPERTY(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.PROPERTY, 0);
    }
    public SELECTOR(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.SELECTOR, 0);
    }
    public THE(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.THE, 0);
    }
    public itsPath(): ItsPathContext | null {
        return this.getRuleContext(0, ItsPathContext);
    }
    public override get ruleIndex(): number {
        return RuleLangParser.RULE_pathStep;
    }
}


export class ItsPathContext extends antlr.ParserRuleContext {
    public constructor(parent: antlr.ParserRuleContext | null, invokingState: number) {
        super(parent, invokingState);
    }
    public ITS(): antlr.TerminalNode {
        return this.getToken(RuleLangParser.ITS, 0)!;
    }
    public PROPERTY(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.PROPERTY, 0);
    }
    public override get ruleIndex(): number {
        return RuleLangParser.RULE_itsPath;
    }
}


export class OperatorContext extends antlr.ParserRuleContext {
    public constructor(parent: antlr.ParserRuleContext | null, invokingState: number) {
        super(parent, invokingState);
    }
    public IS(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.IS, 0);
    }
    public GREATER(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.GREATER, 0);
    }
    public THAN(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.THAN, 0);
    }
    public OR(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.OR, 0);
    }
    public EQUAL(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.EQUAL, 0);
    }
    public TO(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.TO, 0);
    }
    public NOT(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.NOT, 0);
    }
    public AT(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.AT, 0);
    }
    public LEAST(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.LEAST, 0);
    }
    public LESS(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.LESS, 0);
    }
    public NO(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.NO, 0);
    }
    public MORE_KW(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.MORE_KW, 0);
    }
    public EXACTLY(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.EXACTLY, 0);
    }
    public THE(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.THE, 0);
    }
    public SAME(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.SAME, 0);
    }
    public AS(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.AS, 0);
    }
    public IN(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.IN, 0);
    }
    public A(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.A, 0);
    }
    public VALID(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.VALID, 0);
    }
    public EMAIL(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.EMAIL, 0);
    }
    public ADDRESS(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.ADDRESS, 0);
    }
    public UUID(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.UUID, 0);
    }
    public DATE_KW(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.DATE_KW, 0);
    }
    public WITHIN(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.WITHIN, 0);
    }
    public EMPTY(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.EMPTY, 0);
    }
    public LATER(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.LATER, 0);
    }
    public EARLIER(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.EARLIER, 0);
    }
    public OLDER(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.OLDER, 0);
    }
    public YOUNGER(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.YOUNGER, 0);
    }
    public EQUALS(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.EQUALS, 0);
    }
    public DOES(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.DOES, 0);
    }
    public CONTAINS(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.CONTAINS, 0);
    }
    public CONTAIN(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.CONTAIN, 0);
    }
    public HAS(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.HAS, 0);
    }
    public FORMAT(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.FORMAT, 0);
    }
    public HAVE(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.HAVE, 0);
    }
    public MATCHES(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.MATCHES, 0);
    }
    public PATTERN(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.PATTERN, 0);
    }
    public MATCH(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.MATCH, 0);
    }
    public GTE(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.GTE, 0);
    }
    public GT(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.GT, 0);
    }
    public LTE(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.LTE, 0);
    }
    public LT(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.LT, 0);
    }
    public EQEQ(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.EQEQ, 0);
    }
    public NEQ(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.NEQ, 0);
    }
    public override get ruleIndex(): number {
        return RuleLangParser.RULE_operator;
    }
}


export class OperandContext extends antlr.ParserRuleContext {
    public constructor(parent: antlr.ParserRuleContext | null, invokingState: number) {
        super(parent, invokingState);
    }
    public period(): PeriodContext | null {
        return this.getRuleContext(0, PeriodContext);
    }
    public literal(): LiteralContext | null {
        return this.getRuleContext(0, LiteralContext);
    }
    public list(): ListContext | null {
        return this.getRuleContext(0, ListContext);
    }
    public path(): PathContext | null {
        return this.getRuleContext(0, PathContext);
    }
    public THE(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.THE, 0);
    }
    public override get ruleIndex(): number {
        return RuleLangParser.RULE_operand;
    }
}


export class LiteralContext extends antlr.ParserRuleContext {
    public constructor(parent: antlr.ParserRuleContext | null, invokingState: number) {
        super(parent, invokingState);
    }
    public STRING(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.STRING, 0);
    }
    public NUMBER(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.NUMBER, 0);
    }
    public TRUE(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.TRUE, 0);
    }
    public FALSE(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.FALSE, 0);
    }
    public DATE(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.DATE, 0);
    }
    public DATE_KW(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.DATE_KW, 0);
    }
    public LPAREN(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.LPAREN, 0);
    }
    public RPAREN(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.RPAREN, 0);
    }
    public override get ruleIndex(): number {
        return RuleLangParser.RULE_literal;
    }
}


export class ListContext extends antlr.ParserRuleContext {
    public constructor(parent: antlr.ParserRuleContext | null, invokingState: number) {
        super(parent, invokingState);
    }
    public LBRACK(): antlr.TerminalNode {
        return this.getToken(RuleLangParser.LBRACK, 0)!;
    }
    public RBRACK(): antlr.TerminalNode {
        return this.getToken(RuleLangParser.RBRACK, 0)!;
    }
    public literal(): LiteralContext[];
    public literal(i: number): LiteralContext | null;
    public literal(i?: number): LiteralContext[] | LiteralContext | null {
        if (i === undefined) {
            return this.getRuleContexts(LiteralContext);
        }

        return this.getRuleContext(i, LiteralContext);
    }
    public COMMA(): antlr.TerminalNode[];
    public COMMA(i: number): antlr.TerminalNode | null;
    public COMMA(i?: number): antlr.TerminalNode | null | antlr.TerminalNode[] {
    	if (i === undefined) {
    		return this.getTokens(RuleLangParser.COMMA);
    	} else {
    		return this.getToken(RuleLangParser.COMMA, i);
    	}
    }
    public override get ruleIndex(): number {
        return RuleLangParser.RULE_list;
    }
}


export class PeriodContext extends antlr.ParserRuleContext {
    public constructor(parent: antlr.ParserRuleContext | null, invokingState: number) {
        super(parent, invokingState);
    }
    public NUMBER(): antlr.TerminalNode {
        return this.getToken(RuleLangParser.NUMBER, 0)!;
    }
    public unit(): UnitContext {
        return this.getRuleContext(0, UnitContext)!;
    }
    public override get ruleIndex(): number {
        return RuleLangParser.RULE_period;
    }
}


export class UnitContext extends antlr.ParserRuleContext {
    public constructor(parent: antlr.ParserRuleContext | null, invokingState: number) {
        super(parent, invokingState);
    }
    public SECOND(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.SECOND, 0);
    }
    public MINUTE(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.MINUTE, 0);
    }
    public HOUR(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.HOUR, 0);
    }
    public DAY(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.DAY, 0);
    }
    public WEEK(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.WEEK, 0);
    }
    public MONTH(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.MONTH, 0);
    }
    public YEAR(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.YEAR, 0);
    }
    public DECADE(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.DECADE, 0);
    }
    public CENTURY(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.CENTURY, 0);
    }
    public override get ruleIndex(): number {
        return RuleLangParser.RULE_unit;
    }
}


export class LabelPredicateContext extends antlr.ParserRuleContext {
    public constructor(parent: antlr.ParserRuleContext | null, invokingState: number) {
        super(parent, invokingState);
    }
    public MEETS(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.MEETS, 0);
    }
    public REQUIREMENTS(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.REQUIREMENTS, 0);
    }
    public CLEARS(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.CLEARS, 0);
    }
    public SUCCEEDS(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.SUCCEEDS, 0);
    }
    public QUALIFIES(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.QUALIFIES, 0);
    }
    public PASSES(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.PASSES, 0);
    }
    public SATISFIES(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.SATISFIES, 0);
    }
    public IS(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.IS, 0);
    }
    public VALID(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.VALID, 0);
    }
    public APPROVED(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.APPROVED, 0);
    }
    public AUTHORIZED(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.AUTHORIZED, 0);
    }
    public SANCTIONED(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.SANCTIONED, 0);
    }
    public CERTIFIED(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.CERTIFIED, 0);
    }
    public PERMITTED(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.PERMITTED, 0);
    }
    public LEGITIMATE(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.LEGITIMATE, 0);
    }
    public SATISFIED(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.SATISFIED, 0);
    }
    public HAS(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.HAS, 0);
    }
    public PASSED(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.PASSED, 0);
    }
    public override get ruleIndex(): number {
        return RuleLangParser.RULE_labelPredicate;
    }
}


export class KeywordContext extends antlr.ParserRuleContext {
    public constructor(parent: antlr.ParserRuleContext | null, invokingState: number) {
        super(parent, invokingState);
    }
    public A(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.A, 0);
    }
    public AN(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.AN, 0);
    }
    public THE(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.THE, 0);
    }
    public OF(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.OF, 0);
    }
    public IN(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.IN, 0);
    }
    public ITS(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.ITS, 0);
    }
    public ANY(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.ANY, 0);
    }
    public ALL(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.ALL, 0);
    }
    public WHERE(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.WHERE, 0);
    }
    public SATISFIES(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.SATISFIES, 0);
    }
    public PRESENT(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.PRESENT, 0);
    }
    public TRUE(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.TRUE, 0);
    }
    public FALSE(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.FALSE, 0);
    }
    public DATE_KW(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.DATE_KW, 0);
    }
    public LENGTH(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.LENGTH, 0);
    }
    public NUMBER_KW(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.NUMBER_KW, 0);
    }
    public IS(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.IS, 0);
    }
    public NOT(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.NOT, 0);
    }
    public GREATER(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.GREATER, 0);
    }
    public THAN(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.THAN, 0);
    }
    public EQUAL(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.EQUAL, 0);
    }
    public TO(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.TO, 0);
    }
    public AT(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.AT, 0);
    }
    public LEAST(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.LEAST, 0);
    }
    public LESS(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.LESS, 0);
    }
    public NO(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.NO, 0);
    }
    public MORE_KW(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.MORE_KW, 0);
    }
    public EXACTLY(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.EXACTLY, 0);
    }
    public SAME(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.SAME, 0);
    }
    public AS(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.AS, 0);
    }
    public EQUALS(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.EQUALS, 0);
    }
    public DOES(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.DOES, 0);
    }
    public VALID(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.VALID, 0);
    }
    public EMAIL(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.EMAIL, 0);
    }
    public ADDRESS(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.ADDRESS, 0);
    }
    public UUID(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.UUID, 0);
    }
    public WITHIN(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.WITHIN, 0);
    }
    public EMPTY(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.EMPTY, 0);
    }
    public LATER(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.LATER, 0);
    }
    public EARLIER(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.EARLIER, 0);
    }
    public OLDER(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.OLDER, 0);
    }
    public YOUNGER(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.YOUNGER, 0);
    }
    public CONTAINS(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.CONTAINS, 0);
    }
    public CONTAIN(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.CONTAIN, 0);
    }
    public HAS(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.HAS, 0);
    }
    public HAVE(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.HAVE, 0);
    }
    public FORMAT(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.FORMAT, 0);
    }
    public MATCHES(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.MATCHES, 0);
    }
    public MATCH(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.MATCH, 0);
    }
    public PATTERN(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.PATTERN, 0);
    }
    public CLEARS(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.CLEARS, 0);
    }
    public SUCCEEDS(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.SUCCEEDS, 0);
    }
    public QUALIFIES(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.QUALIFIES, 0);
    }
    public PASSES(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.PASSES, 0);
    }
    public MEETS(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.MEETS, 0);
    }
    public REQUIREMENTS(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.REQUIREMENTS, 0);
    }
    public APPROVED(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.APPROVED, 0);
    }
    public PASSED(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.PASSED, 0);
    }
    public AUTHORIZED(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.AUTHORIZED, 0);
    }
    public SANCTIONED(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.SANCTIONED, 0);
    }
    public CERTIFIED(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.CERTIFIED, 0);
    }
    public PERMITTED(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.PERMITTED, 0);
    }
    public LEGITIMATE(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.LEGITIMATE, 0);
    }
    public SATISFIED(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.SATISFIED, 0);
    }
    public SECOND(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.SECOND, 0);
    }
    public MINUTE(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.MINUTE, 0);
    }
    public HOUR(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.HOUR, 0);
    }
    public DAY(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.DAY, 0);
    }
    public WEEK(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.WEEK, 0);
    }
    public MONTH(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.MONTH, 0);
    }
    public YEAR(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.YEAR, 0);
    }
    public DECADE(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.DECADE, 0);
    }
    public CENTURY(): antlr.TerminalNode | null {
        return this.getToken(RuleLangParser.CENTURY, 0);
    }
    public override get ruleIndex(): number {
        return RuleLangParser.RULE_keyword;
    }
}
