# Job status and intake messages (Russian, default).
intake-accepted = Принял файл «{ $name }», задача № { $id }. Поставил в очередь — сообщу, когда будет готово.
intake-duplicate = Этот файл уже есть: задача № { $id }, статус — { $status }.
intake-duplicate-ready = Этот файл уже обработан (задача № { $id }). Присылаю результат ещё раз.
intake-too-big = Файл { $size } МБ больше лимита скачивания этого бота ({ $limit } МБ). Задача № { $id } не будет выполнена.
intake-not-allowed = Извините, этот бот доступен только приглашённым пользователям.
intake-limit-in-flight = У вас уже { $count } файлов в работе (предел { $limit }). Пришлите этот файл, когда какие-то из них будут готовы.
intake-limit-bytes = За последние сутки вы прислали { $used } МБ из { $limit } МБ разрешённых. Попробуйте позже.
intake-unsupported-message = Пришлите документ (PDF или изображение) как файл — я обработаю его и пришлю результат.
help = Я принимаю PDF и изображения и присылаю результат: текст и превью для PDF, очищенную копию для изображений.
  Команды:
  /jobs — ваши последние задачи
  /status N — статус задачи N
  /resend N — прислать результат ещё раз
  /cancel N — отменить задачу
  /delete N — удалить исходник и результат сейчас
  /settings — что делать с файлами

state-accepted = в очереди
state-fetched = скачано, ждёт обработки
state-processing = обрабатывается
state-ready = готово
state-failed = ошибка
state-expired = срок хранения истёк

status-queued = Задача № { $id }: в очереди на скачивание{ $position ->
    [0] {""}
   *[other] , место { $position }
  }.
status-downloading = Задача № { $id }: скачиваю… { $percent } %
status-fetched = Задача № { $id }: файл получен ({ $size }), жду очереди на обработку{ $position ->
    [0] {""}
   *[other] , место { $position }
  }.
status-processing = Задача № { $id }: обрабатываю…
status-processing-pages = Задача № { $id }: обрабатываю страницу { $done } из { $total }…
status-recognizing-pages = Задача № { $id }: распознаю страницу { $done } из { $total }…
status-sending = Задача № { $id }: отправляю результат…
status-ready = Готово, задача № { $id }: { $facts }.
  Результат доступен до { $until } (UTC).
status-ready-reused = Готово, задача № { $id }: такой же файл уже обрабатывался — присылаю готовый результат. Доступен до { $until } (UTC).
status-failed = Задача № { $id } не выполнена: { $reason }
status-retrying = Задача № { $id }: не получилось, пробую ещё раз (попытка { $attempt } из { $max }).
photo-note = Отправлено как фото, поэтому Telegram его сжал; пришлите как файл, чтобы обработать оригинал.
mismatch-note = Файл прислан как «.{ $declared }», но по содержимому это { $actual }.

cmd-status-line = № { $id } · { $name } · { $status }
cmd-jobs-empty = Задач пока нет.
cmd-jobs-title = Ваши последние задачи:
cmd-unknown = Такой команды нет. /help — что я умею.
cmd-not-found = Задача № { $id } не найдена в этом чате.
cmd-not-yours = Задача № { $id } принадлежит другому участнику чата; это может сделать только он или администратор бота.
cmd-usage = Укажите номер задачи, например: /{ $cmd } 12
cmd-resend-not-ready = Задача № { $id } сейчас в статусе «{ $status }», прислать нечего.
cmd-deleted = Задача № { $id }: исходник и результат удалены.
cmd-cancelled = Задача № { $id } отменена.
cmd-cancel-final = Задача № { $id } уже завершена ({ $status }), отменять нечего.
result-caption = Задача № { $id }: { $name }

summary-pdf = PDF, { $pages ->
    [one] { $pages } страница
    [few] { $pages } страницы
   *[other] { $pages } страниц
  }{ $chars ->
    [0] , без текстового слоя
   *[other] , { $chars } символов текста
  }
summary-image = { $label } { $width }×{ $height }{ $frames ->
    [1] {""}
   *[other] , кадров: { $frames }
  }
summary-other = { $label }
# Дописывается к сводке, когда часть файла не вошла в результат (аудит issue 5, пункт 8).
summary-first-page-only = преобразована только страница 1 из { $frames }
summary-first-frame-only = преобразован только кадр 1 из { $frames } (ограничение по числу кадров: { $limit })
summary-no-preview = без превью: первая страница рисовалась слишком долго
summary-images-not-decoded = изображения страниц не удалось декодировать ({ $count ->
    [one] страница
   *[other] страницы
  } { $pages })
# Распознавание текста сканов (issue 13).
summary-ocr-recognized = { $count ->
    [one] распознана { $count } страница
    [few] распознаны { $count } страницы
   *[other] распознано { $count } страниц
  } ({ $chars } символов)
summary-ocr-none = ни одну страницу распознать не удалось
summary-ocr-stopped-page_limit = распознавание остановлено на странице { $page }: за один файл распознаётся не больше { $limit ->
    [one] { $limit } страницы
   *[other] { $limit } страниц
  }
summary-ocr-stopped-time_limit = распознавание остановлено на странице { $page }: истекли { $limit } с, отведённые на распознавание одного файла
summary-ocr-stopped-render_budget = распознавание остановлено на странице { $page }: она рисовалась дольше { $limit } с
summary-ocr-over-budget = не распознаны (дольше { $seconds } с): { $count ->
    [one] страница
   *[other] страницы
  } { $pages }
summary-ocr-failed = распознавание не удалось: { $count ->
    [one] страница
   *[other] страницы
  } { $pages }
summary-ocr-unavailable = распознавание текста на этом сервере сейчас недоступно
summary-searchable-not-needed = PDF с текстовым слоем не нужен: у всех страниц уже есть текстовый слой
summary-searchable-failed = PDF с текстовым слоем из этого файла сделать не удалось (текст — в файле .txt)

settings-title = Что делать с PDF в этом чате? Изменение применяется к новым файлам; тот же файл после изменения обработается заново.
settings-pdf-default = Текст (сканы распознаются) и превью первой страницы
settings-pdf-pages = Все страницы картинками (ZIP)
settings-pdf-searchable = PDF с текстовым слоем: по скану можно искать и копировать
settings-saved = Сохранено

size-kb = { $n } КБ
size-mb = { $n } МБ
