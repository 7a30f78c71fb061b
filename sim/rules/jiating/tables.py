"""The fifty Jiating patterns P01..P50 (J-8) as data: IDs, names, default points, doubling, exclusions.

The tables describe the patterns to people and to the options:
:class:`~caishen.sim.rules.jiating.options.JiatingRules` validates its
``pattern_points``, ``doubled_patterns`` and ``exclusions`` against them, the
record columns ``P01`` .. ``P50`` and the summary's pattern names come from
here.  Each pattern is evaluated by :func:`caishen.sim.rules.jiating.patterns._view_values`;
its definition in words is J-8 (``docs/rules/jiating.md``).
"""

from __future__ import annotations


DECLARATIONS = ("none", "jiating", "hard")

#: J-8 pattern ID -> Chinese name, in ID order
PATTERN_NAMES: dict[str, str] = {
    "P01": "普通胡牌",
    "P02": "架听胡牌",
    "P03": "自摸",
    "P04": "边三七",
    "P05": "中心五",
    "P06": "缺一门",
    "P07": "门清",
    "P08": "半龙",
    "P09": "老少付",
    "P10": "清三付",
    "P11": "老资格",
    "P12": "清四付",
    "P13": "三付五",
    "P14": "门清自摸胡",
    "P15": "三付同",
    "P16": "姊妹付",
    "P17": "付付尖",
    "P18": "杠后开花",
    "P19": "抢杠胡",
    "P20": "四合一",
    "P21": "天地碰",
    "P22": "清三对",
    "P23": "混一色",
    "P24": "硬子",
    "P25": "七对子",
    "P26": "四付五",
    "P27": "绝张子",
    "P28": "万事如意",
    "P29": "全求人",
    "P30": "对对胡",
    "P31": "一条龙",
    "P32": "暗三坎",
    "P33": "四合二",
    "P34": "三清三连",
    "P35": "清四对",
    "P36": "付付幺",
    "P37": "暗四坎",
    "P38": "七对绝张",
    "P39": "三对同",
    "P40": "对对胡尽是碰",
    "P41": "三大元",
    "P42": "清一色",
    "P43": "付付全",
    "P44": "幺幺胡",
    "P45": "小四喜",
    "P46": "天胡",
    "P47": "地胡",
    "P48": "风胡",
    "P49": "坎坎胡",
    "P50": "大四喜",
}
#: J-8 pattern ID -> its name in pinyin (the explanations and the schema page show both)
PATTERN_PINYIN: dict[str, str] = {
    "P01": "putong hupai", "P02": "jiating hupai", "P03": "zimo", "P04": "bian san qi", "P05": "zhongxin wu",
    "P06": "que yi men", "P07": "menqing", "P08": "ban long", "P09": "lao shao fu", "P10": "qing san fu",
    "P11": "lao zige", "P12": "qing si fu", "P13": "san fu wu", "P14": "menqing zimo hu", "P15": "san fu tong",
    "P16": "zimei fu", "P17": "fufu jian", "P18": "gang hou kaihua", "P19": "qiang gang hu", "P20": "si he yi",
    "P21": "tian di peng", "P22": "qing san dui", "P23": "hun yi se", "P24": "yingzi", "P25": "qi duizi",
    "P26": "si fu wu", "P27": "jue zhangzi", "P28": "wanshi ruyi", "P29": "quan qiu ren", "P30": "duidui hu",
    "P31": "yi tiao long", "P32": "an san kan", "P33": "si he er", "P34": "san qing san lian",
    "P35": "qing si dui", "P36": "fufu yao", "P37": "an si kan", "P38": "qi dui jue zhang", "P39": "san dui tong",
    "P40": "duidui hu jin shi peng", "P41": "san da yuan", "P42": "qing yi se", "P43": "fufu quan",
    "P44": "yaoyao hu", "P45": "xiao si xi", "P46": "tian hu", "P47": "di hu", "P48": "feng hu",
    "P49": "kankan hu", "P50": "da si xi",
}
#: every J-8 pattern ID in order (P01 .. P50)
PATTERN_IDS: tuple[str, ...] = tuple(PATTERN_NAMES)

#: J-8 default points
DEFAULT_POINTS: dict[str, int] = {
    "P01": 2, "P02": 2, "P03": 2, "P04": 2, "P05": 2, "P06": 2, "P07": 2,
    "P08": 4, "P09": 4, "P10": 4, "P11": 6, "P12": 8,
    "P13": 10, "P14": 10, "P15": 10, "P16": 10, "P17": 10, "P18": 10, "P19": 10,
    "P20": 10, "P21": 10, "P22": 10,
    "P23": 20, "P24": 20, "P25": 20, "P26": 20, "P27": 20, "P28": 20, "P29": 20,
    "P30": 20, "P31": 20, "P32": 20, "P33": 20, "P34": 20, "P35": 20,
    "P36": 40, "P37": 40, "P38": 40, "P39": 40, "P40": 40,
    "P41": 60, "P42": 60, "P43": 60, "P44": 80, "P45": 100,
    "P46": 200, "P47": 200, "P48": 200, "P49": 200, "P50": 200,
}

#: J-8 patterns marked "暗x2" (concealed doubling, J-6.3)
DEFAULT_DOUBLED: tuple[str, ...] = (
    "P04", "P05", "P06", "P08", "P09", "P10", "P12", "P13", "P15", "P16", "P17", "P20",
    "P21", "P22", "P23", "P24", "P25", "P26", "P27", "P30", "P31", "P33", "P34",
    "P35", "P36", "P38", "P39", "P41", "P42", "P43", "P44", "P45",
)

#: J-7: when the left pattern applies, the patterns on its right do not
DEFAULT_EXCLUSIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("P12", ("P10",)),                # 清四付 over 清三付
    ("P31", ("P08", "P10", "P09")),   # 一条龙 over 半龙, 清三付, 老少付
    ("P35", ("P22",)),                # 清四对 over 清三对
    ("P34", ("P22",)),                # 三清三连 over 清三对
    ("P41", ("P22",)),                # 三大元 over 清三对 (three honor triplets)
    ("P26", ("P13",)),                # 四付五 over 三付五
    ("P50", ("P45",)),                # 大四喜 over 小四喜
    ("P45", ("P22",)),                # 小四喜 over 清三对
    ("P37", ("P32",)),                # 暗四坎 over 暗三坎
    ("P49", ("P30", "P32", "P37")),   # 坎坎胡 over 对对胡, 暗三坎, 暗四坎
    ("P40", ("P30",)),                # 对对胡尽是碰 over 对对胡
    ("P14", ("P07", "P03")),          # 门清自摸胡 over 门清, 自摸
    ("P38", ("P25",)),                # 七对绝张 over 七对子
    ("P47", ("P24",)),                # 地胡 over 硬子
    ("P43", ("P36", "P17")),          # 付付 family: only the highest
    ("P36", ("P17",)),
)
