    if v_restore_lock_timeout is not null then
        perform set_config('lock_timeout', v_restore_lock_timeout, true);
    end if;
    return;
end;
$$;
